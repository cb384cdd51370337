// HLLD flux (Miyoshi & Kusano 2005, J. Comput. Phys. 208, 315; "M&K" below): the HLL fan
// of ideal MHD split by the contact S_M and the two rotational discontinuities S*_L, S*_R
// into four intermediate states U*_L, U**_L, U**_R, U*_R (M&K Fig. 1). It resolves isolated
// contacts and rotational discontinuities exactly; with B = 0 it is the HLLC flux.
//
// One specialization per physics; the GLM-MHD one takes states on which glm_face has run
// (physics_mhd.hpp), so both share Bn* and psi*: Bn is constant through the fan, as M&K
// assume, and the Bn and psi fluxes are psi* and ch^2 Bn* in every region.
//
// Degenerate cases:
//  - |Bx| / sqrt(rho*_K) negligible against the fan width: the rotational discontinuities
//    merge with the contact (S*_K = S_M, U**_K = U*_K), the two-state fan M&K derive for
//    Bx = 0; with B = 0 it is HLLC's.
//  - A rotational discontinuity at or beyond its fast wave, S*_L <= S_L or S*_R >= S_R:
//    for B_t = 0 with c_f = |Bx| / sqrt(rho), and in compressions of low-beta plasma with
//    a weak tangential field. The denominator of the star states (eqs. 44-47),
//      rho_K (S_K - u_K)(S_K - S_M) - Bx^2 = rho*_K (S_K - S*_K)(2 S_M - S_K - S*_K),
//    vanishes at S*_K = S_K; U*_K grows without bound there, and with it the energy of
//    U**_K (eq. 63) and F**_K when S_M is not zero, like the inverse gap. Where the gap (S*_L -
//    S_L) / (S_M - S_L), or its mirror, is below kMinGap, a two-state fan replaces the four: the
//    transverse field of both star states is the HLL one, as in the MHD HLLC solver of Li 2005 (J.
//    Comput. Phys. 203, 344), v* follows from the tangential momentum jump across S_K, and e* from
//    eq. 48 with one (v.B)* = v_hll . B_hll for both sides, so that the flux is the same from
//    either side of the contact. Contacts stay exact; rotational discontinuities are smeared.
//  - S_M outside (S_L, S_R) (not met with the eq. 67 bounds in tests, a guard against
//    non-finite input): rho* would be negative or infinite, and the HLL flux is used.
#pragma once

#include "kernels/physics_mhd.hpp"

namespace tessera::kernels {

template <class Phys>
struct RiemannHlld;

template <>
struct RiemannHlld<MhdGlm> {
  using P = MhdGlm;
  using Vars = P::Vars;

  // Alfven speed |Bx| / sqrt(rho*) below which the rotational discontinuities count as
  // merged with the contact, relative to the fan width: about the square root of the
  // machine epsilon, so that only a field of round-off size is dropped.
  static constexpr Real kSmall = sizeof(Real) == sizeof(float) ? Real(3e-4) : Real(1e-8);
  // Smallest gap (S*_L - S_L) / (S_M - S_L), and mirror, of the four-state fan; the
  // denominator of eqs. 44-47 is then at least kMinGap rho (S_K - u_K)(S_K - S_M). The
  // parts of the four-state flux that grow like the inverse gap set the step where the
  // fan changes: over scans of low-beta compressions it is smallest near 0.03, at most
  // 0.4% of the largest flux component (6% with 0.001, 1% with 0.1).
  static constexpr Real kMinGap = Real(0.03);

  enum class FanKind {
    kFourStates,    // M&K: eqs. 43-63
    kContactOnly,   // Bx negligible: S*_K = S_M, U**_K = U*_K (eqs. 43-48)
    kHllFieldStar,  // gap below kMinGap: two states with the HLL transverse field
    kHll,           // S_M outside (S_L, S_R): the HLL flux
  };

  // The wave fan between the outer speeds: region boundaries S_L, S*_L, S_M, S*_R, S_R
  // (speeds[0..4], ordered, S*_K = S_M for the two-state fans) and the conserved states
  // between them, U*_L, U**_L, U**_R, U*_R (states[0..3]); neither is set for kHll.
  struct Fan {
    FanKind kind;
    Real speeds[5];
    Vars states[4];
  };

  // Intermediate values of one side: density, transverse velocity and field, total
  // energy (normal velocity S_M, Bn and psi are shared by every intermediate state).
  struct Middle {
    Real rho, vy, vz, by, bz, e;
  };

  TESSERA_HD static Vars to_cons(const Middle& m, Real sm, Real bx, Real psi) {
    Vars u;
    u[P::kDens] = m.rho;
    u[P::kMomX] = m.rho * sm;
    u[P::kMomY] = m.rho * m.vy;
    u[P::kMomZ] = m.rho * m.vz;
    u[P::kEngy] = m.e;
    u[P::kBx] = bx;
    u[P::kBy] = m.by;
    u[P::kBz] = m.bz;
    u[P::kPsi] = psi;
    return u;
  }

  // Total energy of U*_K from the energy jump condition across S_K with u* = S_M, the
  // total pressure p_T* and (v.B)* = vbs (eq. 48).
  TESSERA_HD static Real star_energy(const Vars& w, const Vars& u, Real s, Real sm, Real pts,
                                     Real vbs) {
    const Real bx = w[P::kBx];
    const Real pt = w[P::kPres] + P::magnetic_energy(w);
    const Real vb = w[P::kVelX] * bx + w[P::kVelX + 1] * w[P::kBy] + w[P::kVelX + 2] * w[P::kBz];
    return ((s - w[P::kVelX]) * u[P::kEngy] - pt * w[P::kVelX] + pts * sm + bx * (vb - vbs)) /
           (s - sm);
  }

  // U*_K behind the fast wave S_K (eqs. 43-48), with u* = S_M (eq. 39) and the total
  // pressure p_T* (eq. 41). The caller ensures that the denominator of eqs. 44-47 is
  // positive: rho (S - u)(S - S_M) - Bx^2 >= kMinGap rho (S - u)(S - S_M).
  TESSERA_HD static Middle star(const Vars& w, const Vars& u, Real s, Real sm, Real pts,
                                Real rho_star) {
    const Real bx = w[P::kBx];
    const Real su = s - w[P::kVelX];
    const Real msu = w[P::kRho] * su;
    const Real iden = Real(1) / (msu * (s - sm) - bx * bx);
    const Real fv = bx * (sm - w[P::kVelX]) * iden;  // eqs. 44, 46
    const Real fb = (msu * su - bx * bx) * iden;     // eqs. 45, 47
    Middle m;
    m.rho = rho_star;  // eq. 43
    m.vy = w[P::kVelX + 1] - w[P::kBy] * fv;
    m.vz = w[P::kVelX + 2] - w[P::kBz] * fv;
    m.by = w[P::kBy] * fb;
    m.bz = w[P::kBz] * fb;
    m.e = star_energy(w, u, s, sm, pts, sm * bx + m.vy * m.by + m.vz * m.bz);
    return m;
  }

  // U*_K with the given transverse field and (v.B)*: v* from the tangential momentum jump
  // condition across S_K, rho* (S_K - S_M) v* = rho (S_K - u) v - Bx (B* - B), where
  // rho* (S_K - S_M) = rho (S_K - u) (eq. 43); e* from eq. 48.
  TESSERA_HD static Middle star_with_field(const Vars& w, const Vars& u, Real s, Real sm, Real pts,
                                           Real rho_star, Real by, Real bz, Real vbs) {
    const Real f = w[P::kBx] / (w[P::kRho] * (s - w[P::kVelX]));
    Middle m;
    m.rho = rho_star;
    m.by = by;
    m.bz = bz;
    m.vy = w[P::kVelX + 1] - f * (by - w[P::kBy]);
    m.vz = w[P::kVelX + 2] - f * (bz - w[P::kBz]);
    m.e = star_energy(w, u, s, sm, pts, vbs);
    return m;
  }

  TESSERA_HD static Fan fan(const Vars& l, const Vars& r, const Vars& ul, const Vars& ur,
                            const WaveSpeeds& s, const P::Params&) {
    Fan f;
    const Real bx = l[P::kBx], psi = l[P::kPsi];  // equal to r's after glm_face
    const Real ptl = l[P::kPres] + P::magnetic_energy(l);
    const Real ptr = r[P::kPres] + P::magnetic_energy(r);
    const Real ml = l[P::kRho] * (s.left - l[P::kVelX]);   // < 0
    const Real mr = r[P::kRho] * (s.right - r[P::kVelX]);  // > 0
    const Real idm = Real(1) / (mr - ml);
    const Real sm = (mr * r[P::kVelX] - ml * l[P::kVelX] - ptr + ptl) * idm;               // eq. 38
    const Real pts = (mr * ptl - ml * ptr + ml * mr * (r[P::kVelX] - l[P::kVelX])) * idm;  // eq. 41
    // Written so that a NaN S_M fails too.
    if (!(s.left < sm && sm < s.right)) {
      f.kind = FanKind::kHll;
      return f;
    }
    const Real rhol = ml / (s.left - sm), rhor = mr / (s.right - sm);  // eq. 43
    const Real rl = sqrt(rhol), rr = sqrt(rhor);
    const Real abx = fabs(bx);
    // Speeds of the rotational discontinuities (eq. 51). rho*_K = 0 needs c_f = 0 on both
    // sides, hence Bx = 0.
    Real ssl = abx > 0 ? sm - abx / rl : sm;
    Real ssr = abx > 0 ? sm + abx / rr : sm;
    Middle sl, sr, dl, dr;
    if (ssl - s.left < kMinGap * (sm - s.left) || s.right - ssr < kMinGap * (s.right - sm)) {
      f.kind = FanKind::kHllFieldStar;
      // HLL averages (Toro 2009 §10.3) of the transverse field and momentum, with the
      // fluxes F(B_t) = B_t u - Bx v_t and F(rho v_t) = rho v_t u - Bx B_t; u_hll = S_M
      // (eq. 38 is (rho u)_hll / rho_hll).
      const Real idb = Real(1) / (s.right - s.left);
      const Real rho_hll = (mr - ml) * idb;
      Real bh[2], vbs = sm * bx;
      for (int t = 0; t < 2; ++t) {
        const int b = P::kBy + t, v = P::kVelX + 1 + t, m = P::kMomY + t;
        const Real fbl = l[b] * l[P::kVelX] - bx * l[v], fbr = r[b] * r[P::kVelX] - bx * r[v];
        bh[t] = (s.right * r[b] - s.left * l[b] - fbr + fbl) * idb;
        const Real fml = ul[m] * l[P::kVelX] - bx * l[b], fmr = ur[m] * r[P::kVelX] - bx * r[b];
        const Real mh = (s.right * ur[m] - s.left * ul[m] - fmr + fml) * idb;
        vbs += mh / rho_hll * bh[t];
      }
      sl = star_with_field(l, ul, s.left, sm, pts, rhol, bh[0], bh[1], vbs);
      sr = star_with_field(r, ur, s.right, sm, pts, rhor, bh[0], bh[1], vbs);
      ssl = ssr = sm;
      dl = sl;
      dr = sr;
    } else {
      sl = star(l, ul, s.left, sm, pts, rhol);
      sr = star(r, ur, s.right, sm, pts, rhor);
      dl = sl;
      dr = sr;
      if (abx <= kSmall * (s.right - s.left) * min_of(rl, rr)) {
        f.kind = FanKind::kContactOnly;
        ssl = ssr = sm;
      } else {
        f.kind = FanKind::kFourStates;
        const Real sg = bx > 0 ? Real(1) : Real(-1);
        const Real isum = Real(1) / (rl + rr);
        // The transverse v and B shared by U**_L and U**_R (eqs. 59-62); rho** = rho*_K
        // (eq. 49).
        const Real vy = (rl * sl.vy + rr * sr.vy + (sr.by - sl.by) * sg) * isum;
        const Real vz = (rl * sl.vz + rr * sr.vz + (sr.bz - sl.bz) * sg) * isum;
        const Real by = (rl * sr.by + rr * sl.by + rl * rr * (sr.vy - sl.vy) * sg) * isum;
        const Real bz = (rl * sr.bz + rr * sl.bz + rl * rr * (sr.vz - sl.vz) * sg) * isum;
        dl.vy = dr.vy = vy;
        dl.vz = dr.vz = vz;
        dl.by = dr.by = by;
        dl.bz = dr.bz = bz;
        const Real vbd = sm * bx + vy * by + vz * bz;
        const Real vbl = sm * bx + sl.vy * sl.by + sl.vz * sl.bz;
        const Real vbr = sm * bx + sr.vy * sr.by + sr.vz * sr.bz;
        dl.e = sl.e - rl * (vbl - vbd) * sg;  // eq. 63
        dr.e = sr.e + rr * (vbr - vbd) * sg;
      }
    }
    f.speeds[0] = s.left;
    f.speeds[1] = ssl;
    f.speeds[2] = sm;
    f.speeds[3] = ssr;
    f.speeds[4] = s.right;
    f.states[0] = to_cons(sl, sm, bx, psi);
    f.states[1] = to_cons(dl, sm, bx, psi);
    f.states[2] = to_cons(dr, sm, bx, psi);
    f.states[3] = to_cons(sr, sm, bx, psi);
    return f;
  }

  // l, r: primitive states rotated so that component 0 is normal, after glm_face.
  TESSERA_HD static Vars flux(const Vars& l, const Vars& r, const P::Params& p) {
    const WaveSpeeds s = P::hll_speeds(l, r, p);
    const Vars ul = P::prim_to_cons(l, p), ur = P::prim_to_cons(r, p);
    const Vars fl = P::flux(l, ul, p), fr = P::flux(r, ur, p);
    if (s.left >= 0) return fl;
    if (s.right <= 0) return fr;
    const Fan fan_ = fan(l, r, ul, ur, s, p);
    Vars f;
    if (fan_.kind == FanKind::kHll) {
      // Toro 2009 eq. 10.21, S_L < 0 < S_R here.
      const Real idb = Real(1) / (s.right - s.left);
      for (int v = 0; v < P::kNumVars; ++v)
        f[v] = (s.right * fl[v] - s.left * fr[v] + s.right * s.left * (ur[v] - ul[v])) * idb;
      return f;
    }
    // M&K eqs. 64-66: the jump conditions across each wave from the outer state inwards,
    // F*_L = F_L + S_L (U*_L - U_L), F**_L = F*_L + S*_L (U**_L - U*_L), and mirror. When
    // S*_K = S_M the sign of S_M picks the side, as in HLLC.
    const Real ssl = fan_.speeds[1], sm = fan_.speeds[2], ssr = fan_.speeds[3];
    if (sm >= 0) {
      for (int v = 0; v < P::kNumVars; ++v) f[v] = fl[v] + s.left * (fan_.states[0][v] - ul[v]);
      if (ssl < 0)
        for (int v = 0; v < P::kNumVars; ++v) f[v] += ssl * (fan_.states[1][v] - fan_.states[0][v]);
    } else {
      for (int v = 0; v < P::kNumVars; ++v) f[v] = fr[v] + s.right * (fan_.states[3][v] - ur[v]);
      if (ssr > 0)
        for (int v = 0; v < P::kNumVars; ++v) f[v] += ssr * (fan_.states[2][v] - fan_.states[3][v]);
    }
    return f;
  }
};

}  // namespace tessera::kernels
