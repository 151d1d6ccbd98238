// The persistent step of chapters 16 and 17, without a GPU: its schedule of phases against the
// order in which the step-by-step trainer (common/trainer.cu, launch_step) runs the same work, and
// its rule.
//   test_persistent_schedule
// 1. Wiring. Each product the kernel builds for a phase (chapters/16_persistent_step/schedule.cuh)
//    reads and writes the buffers the trainer's step does for it, restated here: the forward
//    product of layer l reads X_l, W16_l and b_l and writes Y_l (the logits for the output layer),
//    the backward-data product of layer l reads dZ_l, W16_l and X_l (for ReLU') and writes
//    dZ_{l-1}, the weight product reads dZ_l and X_l and updates W_l and W16_l; the first layer's
//    X is the batch, gathered from the images.
// 2. Order. Every piece of the trainer's step (forward 0 .. L-1, the loss, then for l = L-1 .. 0
//    backward data and weight product, then the biases) runs in exactly one phase, and any two
//    that touch the same buffer, one of them writing it, run in different phases and in the
//    trainer's order: a grid barrier separates phases, nothing orders the work inside one. The
//    loss is a phase of its own in chapter 16; chapter 17 runs it in the output layer's phase,
//    each block taking the softmax of the rows of the logits tile it has just written (a tile
//    holds whole rows), so there it counts as half a phase after the output layer's product.
// 3. The rule (steps_refusal): the widths, batches and depths it takes, and one line naming the
//    number it refuses.
// Controls: a schedule that updates a layer in the phase whose backward-data product reads its
// weights, one that updates it in the phase that computes its dZ, and a loss in the first
// backward phase (which reads the dZ the loss writes) must all fail the order.
// Built only with nvcc (the chapter's headers hold device code); runs on the CPU.
#include <cstdint>
#include <cstdio>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "16_persistent_step/launch.cuh"
#include "16_persistent_step/schedule.cuh"
#include "check.hpp"

using namespace mnist;
using namespace mnist::persistent_step;

namespace {

constexpr int kBatch = 32;
constexpr float kLearningRate = 0.05f;

// A model whose buffers are distinct addresses that are never dereferenced: the products only
// carry pointers.
struct FakeModel {
  Model m{};
  explicit FakeModel(const LayerSizes& sizes) {
    uintptr_t next = 0;
    const auto take = [&next] { return next += 0x1000; };
    m.layers = static_cast<int>(sizes.size()) - 1;
    for (int l = 0; l < m.layers; ++l) {
      LayerBuffers& y = m.layer[l].buffers;
      y.in = sizes[l];
      y.out = sizes[l + 1];
      y.weights = reinterpret_cast<float*>(take());
      y.bias = reinterpret_cast<float*>(take());
      y.weight_operand = reinterpret_cast<__half*>(take());
      y.output = l + 1 < m.layers ? reinterpret_cast<__half*>(take()) : nullptr;
      y.grad = reinterpret_cast<__half*>(take());
    }
    m.train_images = reinterpret_cast<__half*>(take());
    m.logits = reinterpret_cast<float*>(take());
    m.batch = kBatch;
  }
};

// One piece of a step: what it reads and writes (buffer addresses), under a name for messages.
struct Work {
  std::string name;
  std::set<const void*> reads, writes;
};

// The trainer's step, in its order, from the buffers as common/trainer.cu uses them.
std::vector<Work> trainer_order(const Model& m) {
  const int layers = m.layers;
  const auto& y = [&m](int l) -> const LayerBuffers& { return m.layer[l].buffers; };
  const auto input = [&](int l) -> const void* {
    return l == 0 ? static_cast<const void*>(m.train_images) : y(l - 1).output;
  };
  std::vector<Work> order;
  for (int l = 0; l < layers; ++l) {
    const void* result = l + 1 < layers ? static_cast<const void*>(y(l).output) : m.logits;
    order.push_back(
        {"forward " + std::to_string(l), {input(l), y(l).weight_operand, y(l).bias}, {result}});
  }
  order.push_back({"loss", {m.logits}, {y(layers - 1).grad}});
  for (int l = layers - 1; l >= 0; --l) {
    if (l > 0) {
      order.push_back({"backward data " + std::to_string(l),
                       {y(l).grad, y(l).weight_operand, input(l)},
                       {y(l - 1).grad}});
    }
    order.push_back({"weights " + std::to_string(l),
                     {y(l).grad, input(l), y(l).weights},
                     {y(l).weights, y(l).weight_operand}});
  }
  for (int l = 0; l < layers; ++l) {
    order.push_back({"bias " + std::to_string(l), {y(l).grad, y(l).bias}, {y(l).bias}});
  }
  return order;
}

// What a product reads and writes, from its problem and epilogue.
Work work_of(const std::string& name, const StepProduct& x) {
  const GemmProblem& p = x.p;
  const Epilogue& e = p.epilogue;
  Work w{name, {p.a, p.b}, {}};
  switch (e.kind) {
    case EpilogueKind::kStore:
      w.writes = {p.c};
      break;
    case EpilogueKind::kBias:
      w.reads.insert(e.bias);
      w.writes = {p.c};
      break;
    case EpilogueKind::kBiasRelu:
      w.reads.insert(e.bias);
      w.writes = {e.out};
      break;
    case EpilogueKind::kReluGrad:
      w.reads.insert(e.activation);
      w.writes = {e.out};
      break;
    case EpilogueKind::kSgd:
      w.reads.insert(e.master);
      w.writes = {e.master, e.out};
      break;
  }
  return w;
}

bool same_work(const Work& a, const Work& b) {
  return a.reads == b.reads && a.writes == b.writes;
}

// Where a kernel runs the loss: the phase after the output layer's (chapter 16), half a phase after
// it in the same blocks (chapter 17), or, as a control, in the first backward phase.
enum class Loss { kOwnPhase, kInOutputPhase, kInFirstBackwardPhase };

// The phases of one step as the kernel runs them, each a list of works at a position in the step
// (a barrier between whole positions); `backward` gives backward phase j (the chapter's
// backward_phase_of, or a control).
using Phases = std::vector<std::pair<double, std::vector<Work>>>;
Phases kernel_phases(const Model& m, const std::function<BackwardPhase(int, int)>& backward,
                     Loss loss) {
  const int batch_order_marker = 0;
  const int* batch_order = &batch_order_marker;
  Phases phases;
  for (int l = 0; l < m.layers; ++l) {
    const StepProduct x = forward_product(m, l, kBatch, batch_order);
    CHECK_MSG(x.p.m == kBatch && x.p.n == m.layer[l].buffers.out && x.p.k == m.layer[l].buffers.in,
              "forward product " + std::to_string(l) + ": batch x out x in");
    CHECK_MSG((x.a_gathered == batch_order) == (l == 0), "only layer 0 gathers the batch");
    phases.push_back({double(l), {work_of("forward " + std::to_string(l), x)}});
  }
  const double loss_position = loss == Loss::kInOutputPhase ? m.layers - 0.5 : m.layers;
  phases.push_back({loss_position, {{"loss", {m.logits}, {m.layer[m.layers - 1].buffers.grad}}}});
  const int backward0 = loss == Loss::kOwnPhase ? m.layers + 1 : m.layers;
  for (int j = 0; j < m.layers; ++j) {
    const BackwardPhase phase = backward(m.layers, j);
    std::vector<Work> works;
    if (phase.data_layer >= 1) {
      const StepProduct x = data_product(m, phase.data_layer, kBatch);
      CHECK(x.p.m == kBatch && x.p.k == m.layer[phase.data_layer].buffers.out);
      works.push_back(work_of("backward data " + std::to_string(phase.data_layer), x));
    }
    for (int i = 0; i < phase.sgd_count; ++i) {
      const int l = phase.sgd_layers[i];
      const StepProduct x = weight_product(m, l, kBatch, batch_order, kLearningRate);
      CHECK(x.p.k == kBatch && x.p.epilogue.learning_rate == kLearningRate);
      CHECK_MSG((x.b_gathered == batch_order) == (l == 0), "only layer 0 gathers the batch");
      works.push_back(work_of("weights " + std::to_string(l), x));
      const LayerBuffers& y = m.layer[l].buffers;
      works.push_back({"bias " + std::to_string(l), {y.grad, y.bias}, {y.bias}});
    }
    phases.push_back({backward0 + j, works});
  }
  return phases;
}

bool conflict(const Work& a, const Work& b) {
  for (const void* w : a.writes) {
    if (b.reads.count(w) || b.writes.count(w)) return true;
  }
  for (const void* w : b.writes) {
    if (a.reads.count(w)) return true;
  }
  return false;
}

std::string format_position(double position) {
  char text[16];
  std::snprintf(text, sizeof text, "%g", position);
  return text;
}

// Whether `phases` runs every piece of the trainer's step once, with what it reads and writes, and
// every conflicting pair in separate phases in the trainer's order. Prints the first problem.
bool follows_trainer(const Model& m, const Phases& phases, std::string& problem) {
  const std::vector<Work> order = trainer_order(m);
  std::vector<double> phase_of(order.size(), -1);
  for (const auto& [position, works] : phases) {
    for (const Work& w : works) {
      size_t i = 0;
      while (i < order.size() && order[i].name != w.name) ++i;
      if (i == order.size()) {
        problem = w.name + " is not part of the trainer's step";
        return false;
      }
      if (phase_of[i] != -1) {
        problem = w.name + " runs twice";
        return false;
      }
      if (!same_work(order[i], w)) {
        problem = w.name + " reads or writes other buffers than the trainer's";
        return false;
      }
      phase_of[i] = position;
    }
  }
  for (size_t i = 0; i < order.size(); ++i) {
    if (phase_of[i] == -1) {
      problem = order[i].name + " never runs";
      return false;
    }
    for (size_t k = i + 1; k < order.size(); ++k) {
      if (conflict(order[i], order[k]) && phase_of[i] >= phase_of[k]) {
        problem = order[k].name + " (phase " + format_position(phase_of[k]) +
                  ") must run in a later phase than " + order[i].name + " (phase " +
                  format_position(phase_of[i]) + "): they share a buffer";
        return false;
      }
    }
  }
  return true;
}

void check_schedules() {
  const LayerSizes models[] = {
      {784, 10},
      {784, 64, 10},
      {784, 128, 128, 128, 10},
      {784, 100, 37, 64, 10},
      {784, 1024, 1024, 10},
      {784, 64, 64, 64, 64, 64, 64, 64, 10},
  };
  for (const LayerSizes& sizes : models) {
    const FakeModel fake(sizes);
    const std::string name = format_layer_sizes(sizes);
    const std::pair<const char*, Loss> layouts[] = {{"16", Loss::kOwnPhase},
                                                    {"17", Loss::kInOutputPhase}};
    for (const auto& [chapter, loss] : layouts) {
      std::string problem;
      const bool ok =
          follows_trainer(fake.m, kernel_phases(fake.m, backward_phase_of, loss), problem);
      std::printf("%s, chapter %s: %zu phases a step%s%s\n", name.c_str(), chapter,
                  2 * (sizes.size() - 1) + (loss == Loss::kOwnPhase), ok ? "" : ": ",
                  problem.c_str());
      CHECK_MSG(ok,
                name + ": chapter " + chapter + "'s phases follow the trainer's order: " + problem);
    }
    std::string why;
    const bool loss_control_fails = !follows_trainer(
        fake.m, kernel_phases(fake.m, backward_phase_of, Loss::kInFirstBackwardPhase), why);
    std::printf("  control, the loss in the first backward phase: %s\n",
                loss_control_fails ? why.c_str() : "PASSES");
    CHECK_MSG(loss_control_fails, name + ": the order check tells apart a loss beside backward 0");
    if (fake.m.layers < 2) continue;
    // Controls, each layer still updated once. Phase j updates the layer whose backward-data
    // product it runs (which reads the fp16 weights the update writes); or the layer whose dZ that
    // product computes, the output layer waiting for the last phase (the update reads dZ while it
    // is written).
    const auto same_phase = [](int layers, int j) {
      return BackwardPhase{layers - 1 - j, {layers - 1 - j, 0}, 1};
    };
    const auto too_early = [](int layers, int j) {
      BackwardPhase phase = {layers - 1 - j, {0, 0}, 0};
      if (layers - 2 - j >= 0) phase.sgd_layers[phase.sgd_count++] = layers - 2 - j;
      if (j == layers - 1) phase.sgd_layers[phase.sgd_count++] = layers - 1;
      return phase;
    };
    const std::pair<const char*, std::function<BackwardPhase(int, int)>> controls[] = {
        {"SGD beside the backward-data product that reads its weights", same_phase},
        {"SGD beside the product that computes its dZ", too_early},
    };
    for (const auto& [control, backward] : controls) {
      std::string why;
      const bool fails =
          !follows_trainer(fake.m, kernel_phases(fake.m, backward, Loss::kOwnPhase), why);
      std::printf("  control, %s: %s\n", control, fails ? why.c_str() : "PASSES");
      CHECK_MSG(fails, name + ": the order check tells apart " + control);
    }
  }
}

void check_rule() {
  const auto refusal_names = [](const LayerSizes& sizes, int batch, const std::string& number) {
    const std::string why = steps_refusal(sizes, batch);
    std::printf("%s at batch %d: %s\n", format_layer_sizes(sizes).c_str(), batch,
                why.empty() ? "taken" : why.c_str());
    return !why.empty() && why.find('\n') == std::string::npos &&
           why.find(number) != std::string::npos;
  };
  CHECK(steps_refusal({784, 10}, 1).empty());
  CHECK(steps_refusal({784, 128, 128, 128, 10}, 32).empty());
  CHECK(steps_refusal({784, 64, 64, 64, 64, 64, 64, 64, 10}, 32).empty());  // kMaxLayers
  CHECK(refusal_names({784, 8, 8, 8, 8, 8, 8, 8, 8, 10}, 32, "9"));
  CHECK(refusal_names({784, 128, 10}, kMaxStepBatch + 1, std::to_string(kMaxStepBatch + 1)));
  // The widest hidden layer: up to kMaxWidth at batch 32 (32 tiles of 32 x 32), and past it.
  CHECK(steps_refusal({784, kMaxWidth, kMaxWidth, kMaxWidth, 10}, 32).empty());
  CHECK(refusal_names({784, kMaxWidth + 1, 10}, 32, std::to_string(kMaxWidth + 1)));
  CHECK(refusal_names({784, 1536, 10}, 32, "1536"));
  CHECK(refusal_names({784, 2048, 2048, 10}, 32, "2048"));
  CHECK(refusal_names({784, 1536, 1536, 10}, 64, "1536"));
  CHECK(refusal_names({784, 128, 4096, 128, 10}, 32, "4096"));
  // Batch x widest in 32 x 32 tiles, at most kMaxActivationTiles (132), and its edge at 6 x 22 =
  // 132 tiles and 6 x 23 = 138.
  CHECK(steps_refusal({784, 512, 512, 512, 10}, 256).empty());     // 8 x 16 = 128
  CHECK(steps_refusal({784, 1024, 1024, 1024, 10}, 128).empty());  // 4 x 32
  CHECK(steps_refusal({784, 704, 64, 10}, 192).empty());           // 6 x 22 = 132
  CHECK(refusal_names({784, 705, 64, 10}, 192, "705"));            // 6 x 23 = 138
  CHECK(refusal_names({784, 1024, 1024, 1024, 10}, 129, "1024"));  // 5 x 32 = 160
  CHECK(refusal_names({784, 768, 768, 768, 10}, 256, "768"));      // 8 x 24 = 192
  CHECK(refusal_names({784, 64, 1024, 64, 10}, 200, "200"));       // the batch named too: 224
}

}  // namespace

int main() {
  check_schedules();
  check_rule();
  return testing::finish("persistent_schedule");
}
