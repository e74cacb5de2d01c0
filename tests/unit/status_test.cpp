// Status: one code space per origin, so an NVML code never reads as a SQLite code or an errno.
#include <gtest/gtest.h>

#include <cerrno>

#include "common/result.h"
#include "nvml/errors.h"

namespace gw {
namespace {

TEST(Status, CodesAreReadOnlyThroughTheirOrigin) {
  const Status nvml = nvml::nvmlError(NVML_ERROR_NOT_SUPPORTED, "nvmlDeviceGetPowerUsage");
  const Status sqlite = Status::Sqlite(3, "history database: access permission denied");  // SQLITE_PERM
  const Status sys = Status::Errno(EACCES, "cannot write x");
  const Status app = Status::Error("bad duration");
  for (const Status* s : {&nvml, &sqlite, &sys, &app}) EXPECT_FALSE(s->ok());

  EXPECT_EQ(nvml.origin(), Status::Origin::Nvml);
  EXPECT_EQ(nvml.nvmlCode(), NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(nvml.sqliteCode(), 0);
  EXPECT_EQ(sqlite.nvmlCode(), 0) << "SQLITE_PERM is not 'not supported'";
  EXPECT_EQ(sqlite.sqliteCode(), 3);
  EXPECT_EQ(sys.errnoCode(), EACCES);
  EXPECT_EQ(sys.nvmlCode(), 0);
  EXPECT_EQ(app.origin(), Status::Origin::App);
  EXPECT_EQ(app.nvmlCode() + app.sqliteCode() + app.errnoCode(), 0);

  EXPECT_TRUE(Status::Ok().ok());
  EXPECT_EQ(Status::Ok().origin(), Status::Origin::None);
  EXPECT_EQ(Status().nvmlCode(), 0);
}

TEST(Status, WithMessageKeepsOriginAndCode) {
  const Status s = Status::Sqlite(5, "database is locked").withMessage("alert queue 'q.db': ack: database is locked");
  EXPECT_EQ(s.origin(), Status::Origin::Sqlite);
  EXPECT_EQ(s.sqliteCode(), 5);
  EXPECT_EQ(s.message(), "alert queue 'q.db': ack: database is locked");
  Result<int> r = s;
  EXPECT_EQ(r.status().sqliteCode(), 5);
}

}  // namespace
}  // namespace gw
