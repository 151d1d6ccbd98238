# Patch chapter 08 so that the consumers store nothing but keep every accumulator alive (a sum
# that is compared with an impossible bit pattern), so ptxas cannot drop the wgmmas.
import sys
path = sys.argv[1]
s = open(path).read()
old_a = "      store_accumulators(map_c, acc, consumer, staging, row0 + consumer * kWgmmaM, col0);\n"
old_b = "      finish_accumulators<kKind>(p, acc, row0 + consumer * kWgmmaM, col0, paired);\n"
new = ("      float sum = 0.0f;\n"
       "#pragma unroll\n"
       "      for (int i = 0; i < kAccumulators; ++i) sum += acc[i];\n"
       "      if (__float_as_uint(sum) == 0x7f7ffffeu) p.c[0] = sum;\n")
assert s.count(old_a) == 1 and s.count(old_b) == 1
s = s.replace(old_a, new).replace(old_b, new)
open(path, "w").write(s)
print("alive patched")
