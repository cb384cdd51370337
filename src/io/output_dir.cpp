#include "tessera/io/output_dir.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <random>

#include "src/io/hdf5_util.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/io/checkpoint.hpp"

namespace tessera::io {

std::string new_run_id() {
  std::random_device rd;
  std::string id;
  for (int i = 0; i < 4; ++i) id += strprintf("%08x", static_cast<unsigned>(rd()));
  return id;
}

std::optional<std::string> checkpoint_run_id(const std::string& path) {
  try {
    const CheckpointReader reader(path);
    return reader.header().run_id;
  } catch (const Error&) {
    return std::nullopt;
  }
}

std::vector<std::string> list_plot_files(const std::string& dir, const std::string& problem) {
  namespace fs = std::filesystem;
  std::vector<std::string> found;
  std::error_code ec;
  const std::string suffix = ".athdf";
  for (fs::directory_iterator it(dir.empty() ? "." : dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= problem.size() + 1 + suffix.size() ||
        name.compare(0, problem.size() + 1, problem + ".") != 0 ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    std::string middle =
        name.substr(problem.size() + 1, name.size() - problem.size() - 1 - suffix.size());
    if (middle.compare(0, 8, "failure.") == 0) middle = middle.substr(8);
    if (middle.empty() || !std::all_of(middle.begin(), middle.end(),
                                       [](unsigned char c) { return std::isdigit(c) != 0; }))
      continue;
    found.push_back(it->path().string());
  }
  std::sort(found.begin(), found.end());
  return found;
}

std::optional<std::string> plot_run_id(const std::string& path) {
  detail::QuietHdf5Errors quiet;
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return std::nullopt;
  std::string id;
  if (H5Aexists(f, "RunId") > 0) {
    const hid_t attr = H5Aopen(f, "RunId", H5P_DEFAULT);
    const hid_t type = attr >= 0 ? H5Aget_type(attr) : -1;
    if (type >= 0 && H5Tget_class(type) == H5T_STRING && H5Tis_variable_str(type) == 0) {
      std::vector<char> buf(H5Tget_size(type) + 1, '\0');
      if (H5Aread(attr, type, buf.data()) >= 0) id = buf.data();
    }
    if (type >= 0) H5Tclose(type);
    if (attr >= 0) H5Aclose(attr);
  }
  H5Fclose(f);
  return id;
}

OutputDirLock::OutputDirLock(const std::string& dir) : dir_(dir) {
  acquire();
}

void OutputDirLock::check() {
  namespace fs = std::filesystem;
  const std::string path = (fs::path(dir_) / ".tessera.lock").string();
  if (fd_ < 0) {  // unlocked (no flock here): only the directory is made again
    std::error_code ec;
    if (!fs::is_directory(dir_, ec)) acquire();
    return;
  }
  struct stat now {
  }, held{};
  if (::stat(path.c_str(), &now) == 0 && ::fstat(fd_, &held) == 0 && now.st_dev == held.st_dev &&
      now.st_ino == held.st_ino)
    return;
  // The directory or its lock file was removed: the lock this run holds guards nothing.
  ::close(fd_);
  fd_ = -1;
  acquire();
  log_line(
      "warning: output.dir '%s' (or its lock file) was removed during the run: made again and "
      "locked again; the files written into it before are gone",
      dir_.c_str());
}

void OutputDirLock::acquire() {
  const std::string& dir = dir_;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(ErrorKind::kIo, "output.dir '" + dir + "': cannot create: " + ec.message());
  const std::string path = (std::filesystem::path(dir) / ".tessera.lock").string();
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    throw Error(ErrorKind::kIo,
                "output.dir '" + dir + "': cannot create '" + path + "': " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    if (err == EWOULDBLOCK) {
      char holder[256] = {};
      const ssize_t n = ::pread(fd, holder, sizeof holder - 1, 0);
      ::close(fd);
      std::string who = n > 0 ? std::string(holder, static_cast<std::size_t>(n)) : "";
      while (!who.empty() && (who.back() == '\n' || who.back() == '\0')) who.pop_back();
      throw Error(ErrorKind::kInput,
                  "output.dir '" + dir + "' is in use by another Tessera run" +
                      (who.empty() ? "" : " (" + who + ")") +
                      "; two runs writing into one directory would overwrite and delete each "
                      "other's files: wait for it to end, or give this run another output.dir");
    }
    ::close(fd);
    log_line(
        "warning: output.dir '%s': cannot lock '%s' (%s): this run cannot tell whether "
        "another run writes into the same directory",
        dir.c_str(), path.c_str(), std::strerror(err));
    return;
  }
  fd_ = fd;
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const std::time_t now = std::time(nullptr);
  char when[64] = {};
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&now));
  const std::string who =
      strprintf("pid %ld on host %s, started %s\n", static_cast<long>(::getpid()), host, when);
  // Informative only: a failure to record the holder does not weaken the lock.
  if (::ftruncate(fd_, 0) == 0) {
    [[maybe_unused]] const ssize_t n = ::pwrite(fd_, who.data(), who.size(), 0);
  }
}

OutputDirLock::~OutputDirLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock
}

}  // namespace tessera::io
