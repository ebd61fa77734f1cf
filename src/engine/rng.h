/* rng.h: counter-based random numbers. A draw is a pure function of
 * (seed, stream, a, b), e.g. (seed, HB_RNG_BAGGING, round, row): results do
 * not depend on the thread count or on the order draws are made, and the GPU
 * reproduces every draw: the mixing is defined here once, as inline integer
 * arithmetic that nvcc compiles for the device as well. */
#ifndef HB_RNG_H
#define HB_RNG_H
#include <stdint.h>

#ifdef __CUDACC__
#define HB_RNG_FN static inline __host__ __device__
#else
#define HB_RNG_FN static inline
#endif

enum {
  HB_RNG_BAGGING = 1,
  HB_RNG_FEATURE = 2,
  HB_RNG_GOSS = 3,
  HB_RNG_QUANTIZE = 4,
  HB_RNG_BINNING = 5,
  HB_RNG_DART = 6,     /* (round, 0): skip the round's drops; (round, 1 + i): drop iteration i */
  HB_RNG_EXTRA = 7,    /* extra_trees: (tree, node) then the feature */
  HB_RNG_BYNODE = 8    /* feature_fraction_bynode: (tree, node) then the column */
};

/* splitmix64's finalizer. */
HB_RNG_FN uint64_t hb_rng_mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* The key's mixing in two steps: hb_rng_key_head(seed, stream, a) once
 * for many draws that differ only in b, then hb_rng_key_tail(head, b) per
 * draw (a loop over rows pays one mix a draw instead of four). */
HB_RNG_FN uint64_t hb_rng_key_head(uint64_t seed, uint64_t stream, uint64_t a) {
  uint64_t h = hb_rng_mix64(seed + 0x9e3779b97f4a7c15ULL);
  h = hb_rng_mix64(h ^ (stream * 0xd1b54a32d192ed03ULL));
  return hb_rng_mix64(h ^ (a + 0x9e3779b97f4a7c15ULL));
}
HB_RNG_FN uint64_t hb_rng_key_tail(uint64_t head, uint64_t b) {
  return hb_rng_mix64(head ^ (b * 0xaef17502108ef2d9ULL + 0x632be59bd9b4e019ULL));
}

/* 64 well-mixed bits for the key (seed, stream, a, b). */
HB_RNG_FN uint64_t hb_rng_key(uint64_t seed, uint64_t stream, uint64_t a, uint64_t b) {
  return hb_rng_key_tail(hb_rng_key_head(seed, stream, a), b);
}

/* The 53 high bits of a key as a uniform double in [0, 1) (exact on any
 * IEEE device: an integer times a power of two). */
HB_RNG_FN double hb_rng_bits_unif(uint64_t bits) { return (double)(bits >> 11) * 0x1.0p-53; }

/* One of n (0 .. n-1), uniformly, from 64 bits (LightGBM's
 * rand.NextInt(0, n)); 0 when n <= 1. extra_trees' candidate on both
 * devices. */
HB_RNG_FN int hb_rng_bits_pick(uint64_t bits, int n) {
  if (n <= 1) return 0;
  const int k = (int)(hb_rng_bits_unif(bits) * (double)n);
  return k < n ? k : n - 1;
}

/* A uniform double in [0, 1) for the key (seed, stream, a, b). */
HB_RNG_FN double hb_rng_key_unif(uint64_t seed, uint64_t stream, uint64_t a, uint64_t b) {
  return hb_rng_bits_unif(hb_rng_key(seed, stream, a, b));
}

/* The same, as linkable functions for callers that prefer them. */
double hb_rng_unif(uint64_t seed, uint64_t stream, uint64_t a, uint64_t b);

#endif
