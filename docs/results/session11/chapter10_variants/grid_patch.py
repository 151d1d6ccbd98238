import sys
p = sys.argv[1] + "/chapters/10_persistent_step/steps.cuh"
t = open(p).read()
old = "config.gridDim = dim3(std::min(resident, most_tiles(m)));"
assert t.count(old) == 1
open(p, "w").write(t.replace(old, "config.gridDim = dim3(std::min({resident, most_tiles(m), %s}));" % sys.argv[2]))
