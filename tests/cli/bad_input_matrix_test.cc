// The bad-input matrix: the real binary against hostile files and places (docs/cli.md "Input
// and output files"). Each row is a command that once hung, aborted or destroyed something:
// it must now end within a few seconds (coreutils `timeout` around it, so a regression fails
// instead of hanging CI) with its documented status and one line on stderr, and leave what it
// was pointed at as it was.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "run_cli.h"
#include "testing_files.h"

namespace headroom {
namespace {

namespace fs = std::filesystem;
using testing::CliResult;
using testing::RunProgram;
using testing::Slurp;
using testing::TempDir;

constexpr int kTimeoutSeconds = 15;  // every row ends in well under a second when it holds

// The binary under `timeout`, after `prefix` (setpriv, bash), with `env`.
CliResult RunBounded(const std::vector<std::string>& args,
                     const std::vector<std::string>& prefix = {},
                     const std::vector<std::string>& env = {}) {
  std::vector<std::string> program = prefix;
  for (const std::string& w : {std::string("timeout"), std::string("-k"), std::string("2"),
                               std::to_string(kTimeoutSeconds), std::string(HEADROOM_BINARY)})
    program.push_back(w);
  program.insert(program.end(), args.begin(), args.end());
  return RunProgram(program, (kTimeoutSeconds + 5) * 1000, env);
}

int Lines(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// A samples CSV `report` draws (watch's format, docs/watch.md).
std::string SamplesCsv() {
  std::string csv =
      "# headroom samples schema_version=1 host=h device=none\n"
      "timestamp,mem.total,mem.available\n";
  for (int s = 0; s < 5; ++s)
    csv += "2026-11-29T10:00:0" + std::to_string(s) + "Z,128000000000," +
           std::to_string(100000000000 - s * 1000000000LL) + "\n";
  return csv;
}

struct Fixture {
  TempDir dir{"bad-input"};
  std::string samples = dir.File("samples.csv");
  std::string fifo = dir.File("fifo");
  std::string target = dir.File("target");  // what a symbolic link points at
  std::string link = dir.File("link");
  std::string device;  // a character device that must stay one
  Fixture() {
    testing::WriteFile(samples, SamplesCsv());
    testing::WriteFile(target, "precious\n");
    fs::create_symlink(target, link);
    EXPECT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    // As root a scratch copy of /dev/null (1,3), so a regression replaces that, not the
    // machine's; otherwise /dev/null itself, which a user cannot replace.
    device = dir.File("null");
    if (::geteuid() != 0 || ::mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0)
      device = "/dev/null";
  }
  bool Untouched() const {
    struct stat st {};
    return Slurp(target) == "precious\n" && fs::is_symlink(link) && fs::is_fifo(fifo) &&
           ::stat(device.c_str(), &st) == 0 && S_ISCHR(st.st_mode) &&
           Slurp(samples) == SamplesCsv();
  }
};

struct MatrixRow {
  std::string name;
  std::vector<std::string> args;
  int status;
  std::string err;  // a part of the one line on stderr
};

void Check(const Fixture& f, const MatrixRow& row, const CliResult& r) {
  EXPECT_FALSE(r.timed_out) << row.name;
  EXPECT_NE(r.status, 124) << row.name << ": hung until timeout\n" << r.err;
  EXPECT_EQ(r.status, row.status) << row.name << "\n" << r.err;
  EXPECT_EQ(Lines(r.err), 1) << row.name << "\n" << r.err;
  EXPECT_EQ(r.err.rfind("headroom: ", 0), 0u) << row.name << "\n" << r.err;
  EXPECT_NE(r.err.find(row.err), std::string::npos) << row.name << "\n" << r.err;
  EXPECT_EQ(r.err.find("terminate called"), std::string::npos) << row.name;
  EXPECT_TRUE(f.Untouched()) << row.name;
}

TEST(BadInputMatrix, FifosDevicesSymlinksAndInputsAsOutputs) {
  Fixture f;
  const std::string out = f.dir.File("page.html");
  const std::string journal = f.dir.File("journal.db");
  const std::string marker = f.dir.File("job-ran");
  const MatrixRow rows[] = {
      // Inputs that are FIFOs: an error at once, never a wait for a writer.
      {"report --samples FIFO",
       {"report", "--samples", f.fifo, "-o", out},
       2,
       "--samples: " + f.fifo + ": a FIFO, not a regular file"},
      {"report --log FIFO",
       {"report", "--samples", f.samples, "--log", f.fifo, "-o", out},
       2,
       "--log: " + f.fifo + ": a FIFO, not a regular file"},
      {"report --events FIFO",
       {"report", "--samples", f.samples, "--events", f.fifo, "-o", out},
       2,
       "--events: " + f.fifo + ": a FIFO"},
      {"explain --log FIFO", {"explain", "--log", f.fifo}, 2, "--log: " + f.fifo + ": a FIFO"},
      {"explain --log directory", {"explain", "--log", f.dir.File("")}, 2, "a directory"},
      {"history --journal FIFO",
       {"history", "--journal", f.fifo},
       2,
       f.fifo + ": a FIFO, not a regular file"},
      {"doctor --compare FIFO",
       {"doctor", "--compare", f.fifo, f.samples},
       3,
       "--compare: " + f.fifo + ": a FIFO, not a regular file"},
      {"doctor --compare not a report",
       {"doctor", "--compare", f.samples, f.samples},
       3,
       "--compare: " + f.samples + ": not JSON"},
      {"doctor --compare directory",
       {"doctor", "--compare", f.dir.File(""), f.samples},
       3,
       "a directory"},
      {"doctor --report FIFO",
       {"doctor", "--no-bandwidth", "--report", f.fifo},
       3,
       "--report: " + f.fifo + ": a FIFO; an output replaces only a regular file or nothing"},
      // plan --from inside the other commands' plan words (--plan-args, --workload).
      {"ladder start --plan-args --from FIFO",
       {"ladder", "--journal", journal, "start", "j", "--symptom", "step", "--plan-args",
        "--from " + f.fifo + " --budget 10GB"},
       2,
       "--plan-args: --from: " + f.fifo + ": a FIFO, not a regular file"},
      {"report --plan-args --from directory",
       {"report", "--samples", f.samples, "-o", out, "--plan-args", "--from " + f.dir.File("")},
       2,
       "--plan-args: --from: "},
      {"report --plan-args --from missing",
       {"report", "--samples", f.samples, "-o", out, "--plan-args",
        "--from " + f.dir.File("gone.yml")},
       2,
       "--plan-args: --from: open(" + f.dir.File("gone.yml") + ")"},
      {"doctor --workload from FIFO",
       {"doctor", "--no-bandwidth", "--workload", "from " + f.fifo},
       3,
       "--workload: --from: " + f.fifo + ": a FIFO"},
      // Outputs that are not regular files, or are an input: refused, left as they were.
      {"report -o device",
       {"report", "--samples", f.samples, "-o", f.device},
       2,
       "-o: " + f.device + ": a character device; an output replaces only a regular file"},
      {"report -o symlink",
       {"report", "--samples", f.samples, "-o", f.link},
       2,
       "-o: " + f.link + ": a symbolic link; an output replaces only a regular file"},
      {"report -o FIFO", {"report", "--samples", f.samples, "-o", f.fifo}, 2, "a FIFO"},
      {"report -o its input",
       {"report", "--samples", f.samples, "-o", f.samples},
       2,
       "-o: " + f.samples + ": the same file as the input " + f.samples},
      {"report -o /dev/full", {"report", "--samples", f.samples, "-o", "/dev/full"}, 2, "device"},
      {"doctor --report symlink",
       {"doctor", "--no-bandwidth", "--report", f.link},
       3,
       "--report: " + f.link + ": a symbolic link"},
      {"guard --events FIFO",
       {"guard", "--no-journal", "--events", f.fifo, "--", "touch", marker},
       2,
       "--events: " + f.fifo + ": a FIFO"},
      {"guard --events symlink",
       {"guard", "--no-journal", "--events", f.link, "--", "touch", marker},
       2,
       "--events: " + f.link + ": a symbolic link"},
      {"watch --out FIFO",
       {"watch", "--no-journal", "--out", f.fifo, "--", "touch", marker},
       2,
       "--out: " + f.fifo + ": a FIFO"},
      {"watch --events symlink",
       {"watch", "--no-journal", "--out", f.dir.File("s.csv"), "--events", f.link, "--", "touch",
        marker},
       2,
       "--events: " + f.link + ": a symbolic link"},
      {"watch --log device",
       {"watch", "--no-journal", "--out", f.dir.File("s.csv"), "--log", f.device, "--", "touch",
        marker},
       2,
       "--log: " + f.device + ": a character device"},
      {"watch one file thrice",
       {"watch", "--no-journal", "--out", f.dir.File("one"), "--events", f.dir.File("one"), "--log",
        f.dir.File("one"), "--", "touch", marker},
       2,
       f.dir.File("one") + " and " + f.dir.File("one") + " are the same file"},
      {"sweep --csv symlink",
       {"sweep", "--state", journal, "--csv", f.link, "--batch", "1..2", "--", "touch", marker,
        "{batch}"},
       2,
       "--csv: " + f.link + ": a symbolic link"},
      {"sweep --csv FIFO",
       {"sweep", "--state", journal, "--csv", f.fifo, "--batch", "1..2", "--", "touch", marker,
        "{batch}"},
       2,
       "--csv: " + f.fifo + ": a FIFO"},
  };
  for (const MatrixRow& row : rows) {
    Check(f, row, RunBounded(row.args));
    EXPECT_FALSE(fs::exists(marker)) << row.name << ": the job ran";
    EXPECT_FALSE(fs::exists(out)) << row.name;
  }
  EXPECT_FALSE(fs::exists(journal));  // sweep refused before it made its journal
}

// Values that parse but mean nothing (issue 16, "Smaller ones"): refused by name, before any
// work (no job runs, no journal is made).
TEST(BadInputMatrix, MeaninglessValuesAreRefusedByTheirOwnName) {
  Fixture f;
  const std::string journal = f.dir.File("journal.db");
  const std::string marker = f.dir.File("job-ran");
  const MatrixRow rows[] = {
      {"guard --warn-available below --min-available",
       {"guard", "--no-journal", "--min-available", "8GiB", "--warn-available", "4GiB", "--",
        "touch", marker},
       2,
       "--warn-available: "},
      {"guard --warn-available at --min-available",
       {"guard", "--no-journal", "--min-available", "8GiB", "--warn-available", "8GiB", "--",
        "touch", marker},
       2,
       "the warning could never come first"},
      {"ladder start ''",
       {"ladder", "--journal", journal, "start", "", "--symptom", "load"},
       2,
       "JOB: a blank name would match every process"},
      {"ladder start --match ' '",
       {"ladder", "--journal", journal, "start", "job", "--symptom", "load", "--match", " "},
       2,
       "--match: blank text would match every process"},
      {"plan --lora-rank past any model",
       {"plan", "llama-3.1-8b", "--lora-rank", "9223372036854775807"},
       2,
       "--lora-rank"},
  };
  for (const MatrixRow& row : rows) {
    Check(f, row, RunBounded(row.args));
    EXPECT_FALSE(fs::exists(marker)) << row.name << ": the job ran";
  }
  EXPECT_FALSE(fs::exists(journal));
}

TEST(BadInputMatrix, LibrariesThatWouldHangOrKillTheLoader) {
  Fixture f;
  const std::string whole = Slurp(HEADROOM_FAKE_NVML_PATH);
  ASSERT_GT(whole.size(), 16384u);
  const std::string truncated = f.dir.File("libnvidia-ml.so.1");
  testing::WriteFile(truncated, whole.substr(0, 8192));  // inside its code segment
  for (const std::string& lib : {f.fifo, truncated}) {
    // ps carries on without GPU data and says why on one line.
    const auto r = RunBounded({"ps", "--nvml-lib", lib});
    EXPECT_NE(r.status, 124) << lib << ": hung";
    EXPECT_NE(r.status, 128 + SIGBUS) << lib << ": died of SIGBUS in dlopen";
    EXPECT_NE(r.err.find("nvml: dlopen(" + lib + "): " + lib + ": "), std::string::npos) << r.err;
  }
  const auto r = RunBounded({"bandwidth", "--device-only", "--cuda-lib", truncated});
  EXPECT_NE(r.status, 128 + SIGBUS) << r.err;
  EXPECT_NE(r.err.find("cuda: dlopen(" + truncated + "): " + truncated +
                       ": a truncated ELF file: segment "),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(f.Untouched());
}

TEST(BadInputMatrix, AFifoMeminfoUnderRootIsAnError) {
  Fixture f;
  const fs::path root = f.dir / "root";
  fs::create_directories(root / "proc");
  ASSERT_EQ(::mkfifo((root / "proc/meminfo").c_str(), 0600), 0);
  const auto r = RunBounded({"guard", "--no-journal", "--root", root.string(), "--", "true"});
  EXPECT_NE(r.status, 124) << "hung";
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("proc/meminfo: a FIFO, not a regular file"), std::string::npos) << r.err;
}

TEST(BadInputMatrix, ASymlinkLoopJournalIsAnError) {
  Fixture f;
  const std::string a = f.dir.File("a.db"), b = f.dir.File("b.db");
  fs::create_symlink(b, a);
  fs::create_symlink(a, b);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"history", "--journal", a},
        std::vector<std::string>{"explain", "--run", "1", "--journal", a},
        std::vector<std::string>{"report", "--run", "1", "--journal", a},
        std::vector<std::string>{"ladder", "--journal", a}}) {
    const auto r = RunBounded(args);
    EXPECT_NE(r.status, 134) << args[0] << ": aborted\n" << r.err;
    EXPECT_NE(r.status, 124) << args[0];
    EXPECT_NE(r.status, 0) << args[0];
    EXPECT_EQ(Lines(r.err), 1) << args[0] << "\n" << r.err;
    EXPECT_EQ(r.err.find("terminate called"), std::string::npos) << r.err;
  }
}

// A failed write is a line and a non-zero status, never silence: RLIMIT_FSIZE makes every
// write past the limit fail EFBIG (SIGXFSZ ignored, as `trap '' XFSZ` leaves it for exec).
TEST(BadInputMatrix, AWriteThatFailsIsNotSilent) {
  Fixture f;
  const std::string events = f.dir.File("events.jsonl");
  const auto r = RunBounded({"guard", "--no-journal", "--events", events, "--", "true"},
                            {"bash", "-c", "trap '' XFSZ; ulimit -f 0; exec \"$@\"", "_"});
  EXPECT_NE(r.status, 0) << r.err;
  EXPECT_NE(r.status, 128 + SIGXFSZ) << r.err;
  EXPECT_NE(r.err.find("--events: " + events + ": an event could not be written"),
            std::string::npos)
      << r.err;
  // The note says why the write failed, from the errno the write itself got.
  EXPECT_NE(r.err.find("an event could not be written: " + std::string(std::strerror(EFBIG))),
            std::string::npos)
      << r.err;
  const std::string csv = f.dir.File("s.csv");
  const auto w = RunBounded(
      {"watch", "--no-journal", "--interval", "100ms", "--out", csv, "--", "sleep", "0.5"},
      {"bash", "-c", "trap '' XFSZ; ulimit -f 1; exec \"$@\"", "_"});
  EXPECT_NE(w.status, 0) << w.err;
  EXPECT_NE(w.err.find("write(" + csv + ")"), std::string::npos) << w.err;
}

// Who runs the row: nobody (65534) when the tests run as root, so that permissions bite.
std::vector<std::string> AsUnprivileged() {
  if (::geteuid() != 0) return {};
  return {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
}

TEST(BadInputMatrix, AnUnreadableHomeOrRootIsOneLineNotAnAbort) {
  Fixture f;
  if (::geteuid() == 0 && RunProgram({"setpriv", "--reuid=65534", "true"}).status != 0)
    GTEST_SKIP() << "running as root without a working setpriv to drop to nobody";
  // The folders nobody may enter: 0700 and root's when root, 0000 otherwise.
  const fs::path home = f.dir / "home", root = f.dir / "root";
  fs::create_directories(home / ".local/state");
  fs::create_directories(root / "proc");
  ::chmod(f.dir.path().c_str(), 0755);
  for (const fs::path& p : {home, root}) ::chmod(p.c_str(), ::geteuid() == 0 ? 0700 : 0);
  const std::vector<std::string> env{"HOME=" + home.string(), "XDG_STATE_HOME"};
  const std::vector<std::vector<std::string>> commands{
      {"plan", "llama-3.1-8b"},
      {"explain", "--run", "1"},
      {"report", "--run", "1"},
      {"ladder"},
      {"ps", "--root", root.string()},
      {"top", "--once", "--root", root.string()},
      {"doctor", "--no-bandwidth", "--root", root.string()},
      {"export", "--listen", "127.0.0.1:0", "--root", root.string()},
  };
  for (const auto& args : commands) {
    const auto r = RunBounded(args, AsUnprivileged(), env);
    EXPECT_NE(r.status, 134) << args[0] << ": aborted\n" << r.err;
    EXPECT_NE(r.status, 124) << args[0];
    EXPECT_EQ(r.err.find("terminate called"), std::string::npos) << args[0] << "\n" << r.err;
    EXPECT_LE(Lines(r.err), 1) << args[0] << "\n" << r.err;
  }
  ::chmod(home.c_str(), 0700);
  ::chmod(root.c_str(), 0700);
}

// Threads that cannot be made (a process limit) end `bandwidth` with one line, not an abort.
// RLIMIT_NPROC does not bind root, so the row runs as nobody.
TEST(BadInputMatrix, ThreadsThatCannotBeMadeAreOneLine) {
  if (::geteuid() == 0 && RunProgram({"setpriv", "--reuid=65534", "true"}).status != 0)
    GTEST_SKIP() << "running as root without a working setpriv to drop to nobody";
  std::vector<std::string> prefix = AsUnprivileged();
  for (const char* w : {"prlimit", "--nproc=24"}) prefix.push_back(w);
  const auto r = RunBounded(
      {"bandwidth", "--host-only", "--size", "64MiB", "--threads", "1024", "--repeats", "1"},
      prefix);
  EXPECT_NE(r.status, 134) << r.err;
  EXPECT_NE(r.status, 124) << r.err;
  EXPECT_NE(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find("terminate called"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("host copy: cannot start thread "), std::string::npos) << r.err;
}

}  // namespace
}  // namespace headroom
