// bench/planner_accuracy: plans every usable row of a truth table of published, measured
// peaks (bench/data/planner_truth_dev.csv) and prints estimate vs measured per row,
// then the median and p90 absolute percentage error beside the naive formula's
// (params x 6 B for a full fine-tune; params x 2 B + trainable x 6 B for LoRA/QLoRA).
//
// How a row becomes a plan (the rules are fixed here, not tuned per row):
//  - the architecture columns give the ModelSpec; params_b is taken as the exact count;
//    GPT-NeoX / Phi / Falcon / BLOOM rows are plain-GELU LayerNorm models, Phi and Falcon
//    with parallel attention (one norm per layer);
//  - method, rank, targets, dtypes, optimizer, batch, seq and grad_ckpt come from their
//    columns; "foreach=False" is a loop step, "fused" a fused step, else foreach (the
//    PyTorch default); lit-gpt QLoRA quantizes lm_head too (its notes say so);
//  - the statistic decides what is compared: allocated/active/tracemalloc with the tensor
//    peak, max_memory_reserved with the larger of the tensor peak and the load's device
//    tensors, plus allocator slack (ReservedPeakBytes: the recipes of these rows never empty
//    the allocator's cache between load and training, so what the load reserved stays
//    reserved), unknown stats with the tensor peak; an OOM row is a lower bound and only
//    checked as such;
//  - a blank seq_len uses the stated truncation (512), or for untruncated Alpaca under the
//    Llama-2 tokenizer its longest sample (1304, from the LR rows' notes); such rows are
//    marked "seq assumed"; any other blank seq_len keeps the row out of the headline;
//  - the stack comes from the row's source (LR: litgpt, TT: torchtune, AO: pytorch -- torchao's
//    benchmark is a plain loop --, PEFT: hf) and the Workload starts from its profile
//    (plan/framework_profile.h): the mechanisms no column states (which layers a 4-bit load
//    quantizes, the loss of litgpt's finetune script, gradient dtype) are the profile's; every
//    column the row states (method, dtypes, optimizer and step, dropout, checkpointing, a loss
//    its notes name) overrides it, as a flag would. torchtune rows that predate the chunked
//    loss are planned with the standard loss unless their notes name CEWithChunkedOutputLoss;
//    torchtune rows whose source is dated before 2024-06-26 are planned with torchao 0.1's
//    whole-tensor NF4 quantization (torchtune's pyproject.toml pinned torchao==0.1 from
//    2ab2721e6, 2024-04-04, until c1c9f308a "Pin ao==0.3", 2024-06-26; torchao quantizes in
//    chunks since 6081796bc, 2024-05-01, first released in 0.2);
//  - the figures are also given per framework;
//  - rows that depend on mechanisms the planner does not model are printed but kept out of
//    the headline figures, with the reason: paged optimizers (states spill to the host),
//    optimizer-in-backward, activation offloading, torch.compile, encoder-decoder models,
//    4-bit optimizer states, unknown settings.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/csv.h"
#include "base/message.h"
#include "plan/footprint.h"
#include "plan/framework_profile.h"

using namespace headroom;

namespace {

bool Has(std::string_view hay, std::string_view needle) {
  std::string h(hay), n(needle);
  std::transform(h.begin(), h.end(), h.begin(), ::tolower);
  std::transform(n.begin(), n.end(), n.begin(), ::tolower);
  return h.find(n) != std::string::npos;
}

int64_t ToInt(std::string_view s) { return s.empty() ? 0 : std::stoll(std::string(s)); }

// The first YYYY-MM-DD date in `text`, or "" when there is none.
std::string FirstDate(std::string_view text) {
  auto digits = [&](size_t at, size_t n) {
    for (size_t k = at; k < at + n; ++k) {
      if (!std::isdigit(static_cast<unsigned char>(text[k]))) return false;
    }
    return true;
  };
  for (size_t i = 0; i + 10 <= text.size(); ++i) {
    if (digits(i, 4) && text[i + 4] == '-' && digits(i + 5, 2) && text[i + 7] == '-' &&
        digits(i + 8, 2))
      return std::string(text.substr(i, 10));
  }
  return "";
}

struct Row {
  std::string id, model, method, kind, framework;
  double measured_gb = 0, estimate_gb = 0, naive_gb = 0;
  std::string compare;   // which estimate was compared
  std::string excluded;  // reason, or empty when in the headline figures
  bool lower_bound = false;
  bool seq_assumed = false;
};

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const double pos = p * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "bench/data/planner_truth_dev.csv";
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "planner_accuracy: cannot read %s\n", path.c_str());
    return 2;
  }
  std::stringstream buf;
  buf << in.rdbuf();
  auto table = CsvTable::Parse(buf.str());
  if (!table) {
    std::fprintf(stderr, "planner_accuracy: %s: %s\n", path.c_str(),
                 EnglishText(table.error().what).c_str());
    return 2;
  }

  std::vector<Row> rows;
  for (size_t i = 0; i < table->size(); ++i) {
    auto get = [&](const char* col) { return table->Get(i, col); };
    Row r;
    r.id = get("id");
    r.model = get("model");
    r.method = get("method");
    const std::string_view opt = get("optimizer"), notes = get("notes"), kind = get("measure_kind"),
                           targets = get("lora_targets"), wdt = get("weight_dtype"),
                           layers = get("layers"), seq = get("seq_len"), ckpt = get("grad_ckpt");
    r.measured_gb = std::stod(std::string(get("measured_gb")));

    ModelSpec s;
    s.name = r.model;
    s.hidden_size = ToInt(get("hidden"));
    s.num_heads = ToInt(get("heads"));
    s.num_kv_heads = ToInt(get("kv_heads"));
    s.intermediate_size = ToInt(get("intermediate"));
    s.vocab_size = ToInt(get("vocab"));
    s.exact_params = static_cast<uint64_t>(std::stod(std::string(get("params_b"))) * 1e9);
    const bool enc_dec = Has(layers, "enc");
    s.num_layers = enc_dec ? 2 * ToInt(layers.substr(0, layers.find(' '))) : ToInt(layers);
    const bool gelu = Has(r.model, "phi-1") || Has(r.model, "stablelm") || Has(r.model, "falcon") ||
                      Has(r.model, "bloom");
    if (gelu) {
      s.mlp = MlpKind::kPlain;
      s.layer_norm_bias = true;
      s.attention_bias = s.mlp_bias = !Has(r.model, "falcon");
      if (Has(r.model, "phi-1") || Has(r.model, "falcon")) s.norms_per_layer = 1;
    }
    s.tie_word_embeddings = Has(notes, "tied embeddings");
    if (const Message err = CompleteAndValidate(&s); !err.empty()) {
      std::fprintf(stderr, "planner_accuracy: %s: %s\n", r.id.c_str(), EnglishText(err).c_str());
      return 2;
    }

    const Framework framework = r.id.rfind("LR-", 0) == 0   ? Framework::kLitgpt
                                : r.id.rfind("TT-", 0) == 0 ? Framework::kTorchtune
                                : r.id.rfind("AO-", 0) == 0 ? Framework::kPytorch
                                                            : Framework::kHf;
    r.framework = std::string(Name(framework));
    Workload w = ProfileWorkload(framework);
    // The row states its optimizer step (below: foreach unless it says fused or
    // foreach=False) and its loss (standard unless its notes name another), except litgpt's,
    // which its finetune script fixes (chunked).
    w.optimizer_step = OptimizerStep::kForeach;
    if (framework != Framework::kLitgpt) w.loss = LossKind::kStandard;
    auto method = ParseMethod(r.method);
    if (!method) {
      std::fprintf(stderr, "planner_accuracy: %s: %s\n", r.id.c_str(),
                   EnglishText(method.error().what).c_str());
      return 2;
    }
    w.method = *method;
    if (IsLora(w.method)) {
      w.lora_rank = ToInt(get("lora_rank"));
      if (Has(targets, "query_key_value"))
        w.lora_targets = {"q", "k", "v"};
      else if (Has(targets, "q,k,v,output_proj + mlp") || Has(targets, "q,k,v,output_proj"))
        w.lora_targets = {"q", "k", "v", "o", "gate", "up", "down"};
      else if (Has(targets, "q,v,output_proj + mlp"))
        w.lora_targets = {"q", "v", "o", "gate", "up", "down"};
      else
        w.lora_targets = {"q", "v"};
    }
    // Compute dtype: fp32 rows (PEFT examples) run in fp32; lit-gpt's bf16-mixed keeps fp32
    // weights with bf16 autocast.
    if (wdt.rfind("fp32 master", 0) == 0) {
      w.weight_dtype = DType::kFp32;
      w.compute_dtype = DType::kBf16;
    } else if (wdt.rfind("fp32", 0) == 0) {
      w.weight_dtype = w.compute_dtype = DType::kFp32;
    } else if (Has(wdt, "nf4")) {
      w.weight_dtype = DType::kNf4;
      // bnb.nf4 in lit-gpt: no double quantization; "nf4-dq" and torchao NF4 have it.
      w.double_quant = Has(wdt, "double") || !Has(wdt, "bnb.nf4");
      w.quantize_lm_head = w.quantize_lm_head || Has(notes, "incl. LoRA base layers and lm_head");
    } else {
      w.weight_dtype = DType::kBf16;
    }
    if ((Has(opt, "8-bit") || Has(opt, "8bit")) && !Has(opt, "not 8-bit")) {
      w.optimizer = Optimizer::kAdamW8bit;
    }
    if (Has(opt, "foreach=false"))
      w.optimizer_step = OptimizerStep::kLoop;
    else if (Has(opt, "fused"))
      w.optimizer_step = OptimizerStep::kFused;
    w.batch = ToInt(get("micro_batch"));
    w.lora_dropout = Has(notes, "dropout 0.05") ? 0.05 : Has(notes, "dropout 0.1") ? 0.1 : 0.0;
    if (r.id.rfind("TT-", 0) == 0) w.lora_dropout = 0.05;  // torchtune LoRA defaults then
    w.grad_ckpt = ckpt == "on";
    bool seq_unknown = false;
    if (!seq.empty()) {
      w.seq = ToInt(seq);
    } else if (Has(notes, "truncation 512")) {
      r.seq_assumed = true;
      w.seq = 512;
    } else if (Has(r.model, "llama-2") && Has(notes, "alpaca")) {
      r.seq_assumed = true;
      w.seq = 1304;  // longest Alpaca sample under the Llama-2 tokenizer (LR-10's notes)
    } else {
      seq_unknown = true;
      w.seq = 512;
    }
    if (Has(notes, "chunkedoutputloss") || Has(notes, "chunked ce")) w.loss = LossKind::kChunked;
    if (framework == Framework::kTorchtune) {
      const std::string date = FirstDate(get("source"));
      if (!date.empty() && date < "2024-06-26") w.quantizer = Quantizer::kTorchaoWholeTensor;
    }

    // Mechanisms the planner does not model.
    if (enc_dec)
      r.excluded = "encoder-decoder";
    else if (Has(opt, "paged") && w.method == Method::kFull)
      r.excluded = "paged optimizer";
    else if (Has(opt, "in_bwd") && !Has(opt, "no optimizer_in_bwd"))
      r.excluded = "optimizer in backward";
    else if (Has(notes, "offload") && !Has(notes, "no offload"))
      r.excluded = "activation offloading";
    else if (Has(notes, "compile") && !Has(notes, "compile off") && !Has(notes, "no compile"))
      r.excluded = "torch.compile";
    else if (Has(opt, "4-bit") || Has(opt, "4bit"))
      r.excluded = "4-bit optimizer";
    else if (ckpt == "unknown")
      r.excluded = "unknown settings";
    else if (seq_unknown)
      r.excluded = "sequence length unknown";

    const Footprint f = ComputeFootprint(s, w);
    if (std::getenv("PLANNER_ACCURACY_TERMS")) {
      for (const auto& t : f.terms) {
        std::fprintf(stderr, "%s %-20s %10.3f GB  %s\n", r.id.c_str(), t.key.c_str(),
                     static_cast<double>(t.bytes) / 1e9, EnglishText(t.formula).c_str());
      }
    }
    if (Has(kind, "reserved")) {
      r.compare = "reserved";
      r.estimate_gb = static_cast<double>(ReservedPeakBytes(f, w)) / 1e9;
    } else if (Has(kind, "nvidia-smi")) {
      r.compare = "reserved+ctx";
      r.estimate_gb = static_cast<double>(ReservedPeakBytes(f, w) + f.cuda_context_bytes) / 1e9;
    } else {
      r.compare = "tensor";
      r.estimate_gb = static_cast<double>(f.tensor_peak_bytes) / 1e9;
    }
    r.lower_bound = Has(kind, "OOM");
    const double params = static_cast<double>(f.total_params);
    r.naive_gb =
        (w.method == Method::kFull ? params * 6
                                   : params * 2 + static_cast<double>(f.trainable_params) * 6) /
        1e9;
    rows.push_back(r);
  }

  std::printf("%-8s %-24s %-6s %10s %10s %8s %10s %8s  %s\n", "id", "model", "method", "measured",
              "estimate", "err%", "naive", "err%", "notes");
  std::vector<double> err, naive_err;
  int bounds = 0, bounds_ok = 0;
  for (const Row& r : rows) {
    const double e = 100 * (r.estimate_gb - r.measured_gb) / r.measured_gb;
    const double n = 100 * (r.naive_gb - r.measured_gb) / r.measured_gb;
    std::string note = r.compare;
    if (r.seq_assumed) note += ", seq assumed";
    if (r.lower_bound) {
      ++bounds;
      const bool ok = r.estimate_gb >= r.measured_gb;
      bounds_ok += ok;
      note += fmt::format(", OOM lower bound: {}",
                          ok ? "estimate above it (agrees)" : "estimate BELOW it");
    } else if (!r.excluded.empty()) {
      note += ", excluded: " + r.excluded;
    } else {
      err.push_back(std::fabs(e));
      naive_err.push_back(std::fabs(n));
    }
    std::printf("%-8s %-24s %-6s %8.2f GB %8.2f GB %+7.1f %8.2f GB %+7.1f  %s\n", r.id.c_str(),
                r.model.substr(0, 24).c_str(), r.method.c_str(), r.measured_gb, r.estimate_gb,
                r.lower_bound ? 0.0 : e, r.naive_gb, r.lower_bound ? 0.0 : n, note.c_str());
  }
  std::printf("\nrows: %zu; in the headline figures: %zu; OOM lower bounds: %d (%d agree)\n",
              rows.size(), err.size(), bounds, bounds_ok);
  std::printf("headroom plan: median |error| %.1f %%, p90 %.1f %%, max %.1f %%\n",
              Percentile(err, 0.5), Percentile(err, 0.9), Percentile(err, 1.0));
  std::printf("naive formula: median |error| %.1f %%, p90 %.1f %%, max %.1f %%\n",
              Percentile(naive_err, 0.5), Percentile(naive_err, 0.9), Percentile(naive_err, 1.0));
  std::printf("\nper framework (headline rows):\n");
  for (const FrameworkProfile& p : FrameworkProfiles()) {
    std::vector<double> fe;
    for (const Row& r : rows) {
      if (r.framework != p.name || r.lower_bound || !r.excluded.empty()) continue;
      fe.push_back(std::fabs(100 * (r.estimate_gb - r.measured_gb) / r.measured_gb));
    }
    if (fe.empty()) continue;
    std::printf("  %-14s rows %2zu: median |error| %.1f %%, p90 %.1f %%, max %.1f %%\n",
                std::string(p.name).c_str(), fe.size(), Percentile(fe, 0.5), Percentile(fe, 0.9),
                Percentile(fe, 1.0));
  }
  return 0;
}
