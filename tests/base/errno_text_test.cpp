#include "ringlab/base/errno_text.hpp"

#include <doctest/doctest.h>

#include <cerrno>
#include <string>

using ringlab::base::errno_message;
using ringlab::base::errno_name;

TEST_CASE("errno_name gives the symbol of the values net/ and bench/ report") {
  struct Row {
    int code;
    const char* name;
  };
  const Row rows[] = {{ECONNREFUSED, "ECONNREFUSED"}, {ECONNRESET, "ECONNRESET"}, {ETIMEDOUT, "ETIMEDOUT"},
                      {ENOBUFS, "ENOBUFS"},           {EPIPE, "EPIPE"},           {EINVAL, "EINVAL"},
                      {ECANCELED, "ECANCELED"},       {EBADF, "EBADF"}};
  for (const Row& row : rows) {
    INFO("errno ", row.code);
    CHECK(std::string(errno_name(row.code)) == row.name);
  }
  CHECK(std::string(errno_name(-1)) == "E?");
  CHECK(std::string(errno_name(0)) != "");
}

TEST_CASE("errno_message: op, what, the description and the symbol; no what, no space") {
  CHECK(errno_message("connect", "127.0.0.1:8080", ECONNREFUSED) ==
        "connect 127.0.0.1:8080: Connection refused (ECONNREFUSED)");
  CHECK(errno_message("eventfd", "", EMFILE) == "eventfd: Too many open files (EMFILE)");
  CHECK(errno_message("recv", "", 9999) == "recv: Unknown error (E?)");
}
