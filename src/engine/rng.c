/* rng.c: the linkable face of the counter-based generator in rng.h. */
#include "rng.h"

double hb_rng_unif(uint64_t seed, uint64_t stream, uint64_t a, uint64_t b) {
  return hb_rng_key_unif(seed, stream, a, b);
}
