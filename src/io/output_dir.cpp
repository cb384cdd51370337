#include "tessera/io/output_dir.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <random>

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

OutputDirLock::OutputDirLock(const std::string& dir) {
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
