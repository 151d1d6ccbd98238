# Makes chapter 08's TMA store carry an L2 evict_first policy (a copy of gemm.cuh given as argv[1]).
import sys
path = sys.argv[1]
s = open(path).read()
old = '''  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\\n" ::"l"(
          reinterpret_cast<uint64_t>(&map)),
      "r"(inner), "r"(outer), "r"(source)
      : "memory");'''
new = '''  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\\n" : "=l"(policy));
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group.L2::cache_hint [%0, {%1, %2}], [%3], %4;\\n" ::"l"(
          reinterpret_cast<uint64_t>(&map)),
      "r"(inner), "r"(outer), "r"(source), "l"(policy)
      : "memory");'''
assert old in s, "tma_store not found"
open(path, "w").write(s.replace(old, new))
