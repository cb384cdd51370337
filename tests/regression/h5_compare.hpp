// Dataset-by-dataset comparison of two HDF5 files, byte for byte (attributes, which hold
// run identities and dates, are not compared): "" when every dataset of `a` exists in `b`
// with the same type, shape and bytes, else what differs first.
#pragma once

#include <hdf5.h>

#include <string>
#include <vector>

namespace tessera::testing {

namespace detail {
inline herr_t list_dataset(hid_t, const char* name, const H5O_info_t* info, void* out) {
  if (info->type == H5O_TYPE_DATASET) static_cast<std::vector<std::string>*>(out)->push_back(name);
  return 0;
}

inline std::vector<char> dataset_bytes(hid_t file, const std::string& name, std::string& type) {
  std::vector<char> bytes;
  const hid_t d = H5Dopen2(file, name.c_str(), H5P_DEFAULT);
  if (d < 0) return bytes;
  const hid_t t = H5Dget_type(d), native = H5Tget_native_type(t, H5T_DIR_DEFAULT);
  const hid_t space = H5Dget_space(d);
  const hssize_t n = H5Sget_simple_extent_npoints(space);
  bytes.resize(std::size_t(n) * H5Tget_size(native));
  if (H5Dread(d, native, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()) < 0) bytes.clear();
  type = std::to_string(H5Tget_class(native)) + ":" + std::to_string(H5Tget_size(native)) + ":" +
         std::to_string(n);
  H5Sclose(space), H5Tclose(native), H5Tclose(t), H5Dclose(d);
  return bytes;
}
}  // namespace detail

inline std::string compare_h5_datasets(const std::string& a, const std::string& b) {
  const hid_t fa = H5Fopen(a.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t fb = H5Fopen(b.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  std::string diff;
  if (fa < 0 || fb < 0) diff = "cannot open " + (fa < 0 ? a : b);
  std::vector<std::string> names;
  if (diff.empty())
    H5Ovisit2(fa, H5_INDEX_NAME, H5_ITER_NATIVE, detail::list_dataset, &names, H5O_INFO_BASIC);
  if (diff.empty() && names.empty()) diff = a + " holds no dataset";
  for (const auto& name : names) {
    if (!diff.empty()) break;
    std::string ta, tb;
    const auto x = detail::dataset_bytes(fa, name, ta), y = detail::dataset_bytes(fb, name, tb);
    if (ta != tb || x != y) diff = "dataset " + name + " differs";
  }
  if (fa >= 0) H5Fclose(fa);
  if (fb >= 0) H5Fclose(fb);
  return diff;
}

}  // namespace tessera::testing
