// Reading a parameter file's text (params.hpp): a regular file, or a pipe read from its
// writer; a directory or a pipe without a writer is an input error.
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tessera/core/error.hpp"
#include "tessera/core/params.hpp"

namespace tessera {
namespace {

// A parameter file that is a pipe: what its writer sends, up to the writer's end. Opened
// without waiting, so that a named pipe nobody writes to is an error, not a run that
// waits forever; a pipe with a writer (the shell's <(...), a program feeding a FIFO) is
// read as the writer produces it.
std::string read_pipe(const std::string& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK);
  if (fd < 0)
    throw Error(ErrorKind::kInput,
                file + ": cannot open the parameter file: " + std::strerror(errno));
  std::string text;
  char buf[65536];
  constexpr int kGraceMs = 5000;
  int waited_ms = 0;
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      text.append(buf, std::size_t(n));
    } else if (n == 0) {
      // No writer: none any more, or none yet (one started beside the run may open the
      // pipe a moment after it): a few seconds' grace before an empty pipe is an error.
      if (!text.empty() || waited_ms >= kGraceMs) break;
      ::usleep(100000);
      waited_ms += 100;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      pollfd p{fd, POLLIN, 0};
      ::poll(&p, 1, -1);  // a writer holds it open: wait for its data or its end
    } else if (errno != EINTR) {
      const int e = errno;
      ::close(fd);
      throw Error(ErrorKind::kInput,
                  file + ": cannot read the parameter file: " + std::strerror(e));
    }
  }
  ::close(fd);
  if (text.empty())
    throw Error(ErrorKind::kInput,
                file +
                    ": is a pipe that nothing was written to (no program opened it for "
                    "writing within 5 s): give a parameter file, or start the program that "
                    "writes the pipe");
  return text;
}

}  // namespace

std::string read_param_file(const std::string& file) {
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec))
    throw Error(ErrorKind::kInput, file + ": is a directory, not a parameter file");
  if (std::filesystem::is_fifo(file, ec)) return read_pipe(file);
  errno = 0;
  std::ifstream in(file, std::ios::binary);
  if (!in)
    throw Error(ErrorKind::kInput, file + ": cannot open the parameter file" +
                                       (errno ? std::string(": ") + std::strerror(errno) : ""));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad())
    throw Error(ErrorKind::kInput, file + ": cannot read the parameter file" +
                                       (errno ? std::string(": ") + std::strerror(errno) : ""));
  return text.str();
}

}  // namespace tessera
