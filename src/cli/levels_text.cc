#include "cli/levels_text.h"

#include <fmt/format.h>

#include <cstdio>

#include "base/bytes.h"
#include "base/table.h"
#include "cli/i18n.h"
#include "config/pool_levels_config.h"
#include "gpu/platform.h"

namespace headroom {
namespace {

std::string LevelFigure(const std::optional<PoolLevels>& levels, PoolLevel PoolLevels::*level) {
  if (!levels) return "-";
  return FormatGiB(((*levels).*level).bytes);
}

}  // namespace

std::string LevelSourceText(const PoolLevel& level) {
  switch (level.origin) {
    case LevelOrigin::kRule:
      // TRANSLATORS: {} is a level's default rule, e.g. "twice the kill level".
      return TrFormat("default: {}", TrText(level.where));
    case LevelOrigin::kConfig:
    case LevelOrigin::kFlag:
      break;
  }
  return level.where;
}

void PrintLevelsTable(const CliEnv& env, const Settings& settings,
                      std::optional<uint64_t> mem_total_here) {
  std::optional<PoolLevels> here;
  if (mem_total_here) here = ConfiguredPoolLevels(settings, *mem_total_here);
  const PoolLevels spark = ConfiguredPoolLevels(settings, kGb10MemTotalBytes);
  using A = TextTable::Align;
  TextTable t({A::kLeft, A::kRight, A::kRight, A::kLeft, A::kLeft});
  t.AddRow({Tr("LEVEL"), Tr("THIS MACHINE"), Tr("A SPARK (GB10)"), Tr("SOURCE"), Tr("USED BY")});
  t.AddRow({"MemTotal", mem_total_here ? FormatGiB(*mem_total_here) : "-",
            FormatGiB(kGb10MemTotalBytes), Tr("/proc/meminfo; a Spark's from its profile"), ""});
  struct Row {
    const char* name;
    PoolLevel PoolLevels::*level;
    const char* used_by;
  };
  const Row rows[] = {
      {N_("reserve"), &PoolLevels::reserve, N_("plan (set aside for the OS)")},
      {N_("warning level"), &PoolLevels::warn,
       N_("guard, watch --guard (checkpoint); plan (fits above it)")},
      {N_("kill level"), &PoolLevels::kill,
       N_("guard, sweep, watch --guard (kill); plan (does not fit below it); ps --need")},
      {N_("sweep limit"), &PoolLevels::sweep_limit, N_("sweep --limit (a trial's peak)")},
  };
  for (const Row& r : rows) {
    t.AddRow({Tr(r.name), LevelFigure(here, r.level), LevelFigure(spark, r.level),
              LevelSourceText(spark.*r.level), Tr(r.used_by)});
  }
  std::fprintf(env.out, "\n%s\n%s\n%s\n", Tr("levels (docs/config.md \"The levels\"):"),
               t.Render(0).c_str(),
               Tr("the levels are free memory (MemAvailable) except the sweep limit, a pool use"));
}

}  // namespace headroom
