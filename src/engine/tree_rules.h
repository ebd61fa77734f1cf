/* tree_rules.h: which way a raw value goes at a split node, written once for
 * the CPU's prediction (tree.h's hb_tree_goes_left, predict.c's branch-free
 * walk) and the GPU's (cuda/predict.cu), so that the two walks cannot drift
 * apart: the same leaf for every value, NaN, infinity and factor code. */
#ifndef HB_TREE_RULES_H
#define HB_TREE_RULES_H
#include <stdint.h>

#define HB_DECISION_DEFAULT_LEFT 1u  /* missing values go left */
#define HB_DECISION_CATEGORICAL 2u   /* split on a set of levels */

#ifdef __CUDACC__
#define HB_TREE_RULE static inline __host__ __device__
#else
#define HB_TREE_RULE static inline
#endif

/* A numeric node: missing (NaN) goes the default way (default_left 0 or 1),
 * any other value left when v <= threshold. Branch-free. */
HB_TREE_RULE int hb_rule_num_left(double v, double threshold, int default_left) {
  return (v <= threshold) | ((v != v) & default_left);
}

/* Any node, decision `dec` (HB_DECISION_* bits): 1 left, 0 right. A
 * categorical value is a level code as a double; NaN, a negative, a
 * fractional or a code beyond the node's bitset (cat_nwords words from
 * cat_bits[cat_begin]) goes the default way, else the code's bit decides.
 * cat_bits is only read for a categorical node. */
HB_TREE_RULE int hb_rule_goes_left(unsigned dec, double threshold, const uint32_t *cat_bits, int cat_begin,
                                   int cat_nwords, double v) {
  const int dl = (dec & HB_DECISION_DEFAULT_LEFT) != 0;
  if (v != v) return dl;
  if (dec & HB_DECISION_CATEGORICAL) {
    if (!(v >= 0.0) || v >= 32.0 * cat_nwords) return dl;
    const int c = (int)v;
    if ((double)c != v) return dl;
    return (int)((cat_bits[cat_begin + (c >> 5)] >> (c & 31)) & 1u);
  }
  return v <= threshold;
}

#endif
