/* split_rules.h: the arithmetic of a split, written once for the CPU
 * learner (split.c, grow.c) and the CUDA learner (src/cuda), so both grow
 * the same trees from the same sums.
 *
 *   gain of a leaf      L(G, H) = T(G)^2 / (H + l2), T the L1 soft threshold
 *   gain of a split     L(GL, HL) + L(GR, HR) - L(G, H)
 *   leaf output         -T(G) / (H + l2)   (before the learning rate)
 *
 * Histogram bins hold gradient and hessian sums only, no row counts (as in
 * LightGBM and XGBoost): a count is estimated from a hessian sum as
 * round(h * n / H) with n and H the leaf's exact row count and hessian sum.
 * The estimate is exact when every row has the same hessian (squared error
 * without weights), and it saves a third accumulator per bin, which is a
 * third of the memory traffic on the CPU and a third atomic on the GPU.
 * A candidate's count is the sum of its bins' estimates, accumulated bin by
 * bin in scan order, on both devices alike.
 *
 * Everything here is a pure function of its arguments with no floating-point
 * contraction left to the compiler: the CUDA build compiles these with
 * -fmad=false so a GPU gain is bitwise the CPU gain for the same sums. */
#ifndef HB_SPLIT_RULES_H
#define HB_SPLIT_RULES_H

#ifdef __CUDACC__
#define HB_RULE static inline __host__ __device__
#else
#define HB_RULE static inline
#endif

HB_RULE double hb_rule_soft_threshold(double g, double l1) {
  if (l1 <= 0) return g;
  if (g > l1) return g - l1;
  if (g < -l1) return g + l1;
  return 0.0;
}

/* L(G, H): the loss reduction a leaf with these sums is worth. */
HB_RULE double hb_rule_leaf_gain(double g, double h, double l1, double l2) {
  double t = hb_rule_soft_threshold(g, l1);
  double den = h + l2;
  return den > 0 ? t * t / den : 0.0;
}

/* The unshrunk leaf output -T(G)/(H + l2); 0 for an empty or weightless leaf. */
HB_RULE double hb_rule_leaf_output(double g, double h, double l1, double l2) {
  double den = h + l2;
  return den > 0 ? -hb_rule_soft_threshold(g, l1) / den : 0.0;
}

/* n / H: multiplies a hessian sum into an estimated row count. */
HB_RULE double hb_rule_count_factor(int n, double h) {
  return h > 0 ? (double)n / h : 0.0;
}

/* Estimated rows behind a bin's hessian sum h (round half up, never < 0). */
HB_RULE int hb_rule_count(double h, double count_factor) {
  double c = h * count_factor + 0.5;
  c = c > 0.0 ? c : 0.0;   /* a max (NaN to 0), not a branch: the scans call this for every bin; */
  return (int)c;           /* under 1 truncates to 0 */
}

/* Whether a leaf with hessian sum H has rows in a feature's missing bin
 * (estimated count na_n, hessian sum na_h): by count, or by hessian mass
 * above what rounding leaves behind in a subtracted histogram, so rows with
 * tiny weights still get a direction their leaf's sums account for. */
HB_RULE int hb_rule_has_missing(int na_n, double na_h, double H) {
  return na_n > 0 || na_h > 1e-10 * H;
}

/* A numeric threshold's scans and rows, LightGBM's (FeatureHistogram's
 * FindBestThresholdSequentially): a scan from the top sends the missing bin
 * left and counts the right side, bin by bin, its left rows the leaf's n
 * less those; a scan from the bottom (only for a feature with missing
 * values in training) sends it right and counts the left side, or, where
 * the feature's most frequent bin is its first, again the right side, the
 * missing rows with it. The counts of one threshold can differ by the
 * rounding of each bin's estimate, and min_data_in_leaf takes whichever
 * the scan made. */

/* The left rows of a threshold scanned from the top: n less the right
 * side's estimate, right = all_values - left_values (estimates summed bin
 * by bin over all value bins and over those <= the threshold). */
HB_RULE int hb_rule_top_scan_left(int n, int all_values, int left_values) {
  return n - (all_values - left_values);
}

/* The left rows of a threshold scanned from the bottom: the estimate of
 * the value bins <= the threshold (left_values), or, for a feature whose
 * most frequent bin is LightGBM's first (count_right: its FeatureMetainfo
 * offset 1, dataset.c), n less the right side's values and the missing
 * rows (na), as that scan then counts. */
HB_RULE int hb_rule_bottom_scan_left(int n, int all_values, int left_values, int na, int count_right) {
  return count_right ? n - (all_values - left_values) - na : left_values;
}

/* The left rows of every value against the missing bin alone (the bottom
 * scan's last threshold): hb_rule_bottom_scan_left with every value left. */
HB_RULE int hb_rule_bottom_scan_all(int n, int all_values, int na, int count_right) {
  return hb_rule_bottom_scan_left(n, all_values, all_values, na, count_right);
}

/* Whether the missing bin goes left, for a winner of the top scan
 * (from_top) or of the bottom one: as the scan sent it when the leaf has
 * missing rows (has_na); without any, to the larger child (nl of n rows on
 * the left), where unseen missing values are likelier to belong. */
HB_RULE int hb_rule_missing_left(int from_top, int has_na, int nl, int n) {
  return has_na ? from_top : nl >= n - nl;
}

/* Whether a tree that could not split (its root its one leaf, n rows and
 * hessian h) may add its root's output: only when the root is a leaf
 * min_data_in_leaf and min_sum_hessian_in_leaf allow, as every other leaf
 * is. Otherwise the tree adds nothing (value 0, as LightGBM's unsplit trees
 * do): a root whose hessian is below min_sum_hessian_in_leaf (a rare class
 * whose probabilities have all gone to 0) would divide by almost nothing. */
HB_RULE int hb_rule_lone_root_counts(int n, double h, int min_data_in_leaf, double min_sum_hessian) {
  return n >= min_data_in_leaf && h >= min_sum_hessian;
}

/* Whether a leaf with n rows and hessian h may be split at all. */
HB_RULE int hb_rule_splittable(int n, double h, int min_data_in_leaf, double min_sum_hessian) {
  return n >= 2 * min_data_in_leaf && h >= 2 * min_sum_hessian;
}

/* The gain of the split left = (gl, hl, nl) of a leaf (g, h, n), or -1 when a
 * side breaks min_data_in_leaf / min_sum_hessian_in_leaf or the gain does not
 * exceed min_gain (callers pass max(min_gain_to_split, 0)). parent_gain is
 * hb_rule_leaf_gain(g, h, l1, l2). */
HB_RULE double hb_rule_split_gain(double gl, double hl, int nl, double g, double h, int n,
                                  double l1, double l2, double parent_gain, int min_data_in_leaf,
                                  double min_sum_hessian, double min_gain) {
  int nr = n - nl;
  double hr = h - hl;
  if (nl < min_data_in_leaf || nr < min_data_in_leaf) return -1.0;
  if (hl < min_sum_hessian || hr < min_sum_hessian) return -1.0;
  double gain = hb_rule_leaf_gain(gl, hl, l1, l2) + hb_rule_leaf_gain(g - gl, hr, l1, l2) - parent_gain;
  return gain > min_gain ? gain : -1.0;
}

/* x within [lo, hi]. */
HB_RULE double hb_rule_clamp(double x, double lo, double hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}

/* What a leaf with sums (g, h) is worth when its output is o rather than
 * its own -T(G)/(H + l2): -(2 T(G) o + (H + l2) o^2), LightGBM's
 * GetLeafGainGivenOutput (equal to L(G, H) at o = -T(G)/(H + l2)). */
HB_RULE double hb_rule_leaf_gain_given_output(double g, double h, double l1, double l2, double o) {
  return -(2.0 * hb_rule_soft_threshold(g, l1) * o + (h + l2) * o * o);
}

/* hb_rule_split_gain for a leaf whose outputs must stay within [lo, hi],
 * split on a feature with monotone constraint mono (-1, 0, 1): LightGBM's
 * "basic" method. Each side's output is its own clamped to the bounds; with
 * mono = 1 a split whose left output exceeds its right one is invalid (-1),
 * with mono = -1 one whose left output is below its right one; a side is
 * worth hb_rule_leaf_gain_given_output at its clamped output, less the
 * parent's unconstrained L(G, H) as always. */
HB_RULE double hb_rule_split_gain_bounded(double gl, double hl, int nl, double g, double h, int n, double l1,
                                          double l2, double parent_gain, int min_data_in_leaf,
                                          double min_sum_hessian, double min_gain, double lo, double hi,
                                          int mono) {
  int nr = n - nl;
  double hr = h - hl, gr = g - gl;
  if (nl < min_data_in_leaf || nr < min_data_in_leaf) return -1.0;
  if (hl < min_sum_hessian || hr < min_sum_hessian) return -1.0;
  double ol = hb_rule_clamp(hb_rule_leaf_output(gl, hl, l1, l2), lo, hi);
  double orr = hb_rule_clamp(hb_rule_leaf_output(gr, hr, l1, l2), lo, hi);
  if ((mono > 0 && ol > orr) || (mono < 0 && ol < orr)) return -1.0;
  double gain = hb_rule_leaf_gain_given_output(gl, hl, l1, l2, ol) +
                hb_rule_leaf_gain_given_output(gr, hr, l1, l2, orr) - parent_gain;
  return gain > min_gain ? gain : -1.0;
}

/* Monotone constraints at a split (LightGBM's basic method), for a leaf
 * whose outputs are bounded by [lo, hi], on a feature with constraint mono
 * (0 for a categorical split): the children's bounds b = {left lo, left
 * hi, right lo, right hi}, the parent's with the midpoint of the two
 * outputs put between them on a constrained split; and the children's
 * unshrunk outputs o, each its own clamped to the parent's bounds and then
 * to its own. They change only where rounding made the search's order of
 * the two outputs (from other sums of the same rows) disagree with theirs:
 * every leaf keeps within its bounds, which makes the trees monotone. The
 * CPU grower's, the GPU partition's and the host's replay of GPU trees. */
HB_RULE void hb_rule_bound_children_given(double lo, double hi, double o0, double o1, int mono, double b[4],
                                          double o[2]) {
  o[0] = hb_rule_clamp(o0, lo, hi);
  o[1] = hb_rule_clamp(o1, lo, hi);
  b[0] = b[2] = lo;
  b[1] = b[3] = hi;
  if (mono) {
    const double mid = (o[0] + o[1]) / 2.0;
    if (mono > 0) {
      if (mid < b[1]) b[1] = mid;
      if (mid > b[2]) b[2] = mid;
    } else {
      if (mid > b[0]) b[0] = mid;
      if (mid < b[3]) b[3] = mid;
    }
  }
  o[0] = hb_rule_clamp(o[0], b[0], b[1]);
  o[1] = hb_rule_clamp(o[1], b[2], b[3]);
}

HB_RULE void hb_rule_bound_children(double lo, double hi, double gl, double hl, double gr, double hr, double l1,
                                    double l2, int mono, double b[4], double o[2]) {
  hb_rule_bound_children_given(lo, hi, hb_rule_leaf_output(gl, hl, l1, l2), hb_rule_leaf_output(gr, hr, l1, l2),
                               mono, b, o);
}

/* max_delta_step and path_smooth (LightGBM's CalculateSplittedLeafOutput):
 * a leaf's unshrunk output -T(G)/(H + l2) is capped to [-mds, mds] (mds >
 * 0), then smoothed towards its parent's output p by the leaf's n rows,
 * o n/a / (n/a + 1) + p / (n/a + 1) (a = path_smooth > 0). The root is not
 * smoothed (its output is its own, capped). */
HB_RULE double hb_rule_leaf_output_ext(double g, double h, int n, double l1, double l2, double mds, double alpha,
                                       double parent) {
  double o = hb_rule_leaf_output(g, h, l1, l2);
  if (mds > 0 && (o > mds || o < -mds)) o = o > 0 ? mds : -mds;
  if (alpha > 0) {
    const double w = (double)n / alpha;
    o = o * w / (w + 1.0) + parent / (w + 1.0);
  }
  return o;
}

/* The worth a split under max_delta_step / path_smooth must beat (LightGBM's
 * gain shift, FeatureHistogram::BeforeNumercal): the leaf's at its own
 * output capped and, when smoothing (alpha > 0), smoothed by its n rows
 * towards leaf_out, the output the leaf was given (the root's: its own
 * capped, which the smoothing leaves as it is, up to rounding). Not the
 * leaf's worth at leaf_out itself: that is another number below the root,
 * which made other leaves win the growth order than LightGBM's. */
HB_RULE double hb_rule_parent_gain_ext(double g, double h, int n, double l1, double l2, double mds, double alpha,
                                       double leaf_out) {
  const double o = hb_rule_leaf_output_ext(g, h, n, l1, l2, mds, alpha > 0 ? alpha : 0.0, leaf_out);
  return hb_rule_leaf_gain_given_output(g, h, l1, l2, o);
}

/* The gain of a split under max_delta_step / path_smooth (and monotone
 * bounds [lo, hi] and constraint mono, as hb_rule_split_gain_bounded):
 * each side is worth hb_rule_leaf_gain_given_output at its output
 * hb_rule_leaf_output_ext (clamped to the bounds), less parent_gain, the
 * leaf's worth at its own output (hb_rule_leaf_gain_given_output). */
HB_RULE double hb_rule_split_gain_ext(double gl, double hl, int nl, double g, double h, int n, double l1, double l2,
                                      double parent_gain, int min_data_in_leaf, double min_sum_hessian,
                                      double min_gain, double lo, double hi, int mono, double mds, double alpha,
                                      double parent_out) {
  int nr = n - nl;
  double hr = h - hl, gr = g - gl;
  if (nl < min_data_in_leaf || nr < min_data_in_leaf) return -1.0;
  if (hl < min_sum_hessian || hr < min_sum_hessian) return -1.0;
  double ol = hb_rule_clamp(hb_rule_leaf_output_ext(gl, hl, nl, l1, l2, mds, alpha, parent_out), lo, hi);
  double orr = hb_rule_clamp(hb_rule_leaf_output_ext(gr, hr, nr, l1, l2, mds, alpha, parent_out), lo, hi);
  if ((mono > 0 && ol > orr) || (mono < 0 && ol < orr)) return -1.0;
  double gain = hb_rule_leaf_gain_given_output(gl, hl, l1, l2, ol) +
                hb_rule_leaf_gain_given_output(gr, hr, l1, l2, orr) - parent_gain;
  return gain > min_gain ? gain : -1.0;
}

/* Categorical splits, LightGBM's rules (FeatureHistogram's categorical
 * threshold search), a category being a bin of the feature (the missing
 * bin is one more category here; LightGBM sends missing values right):
 *
 * - one-vs-rest when the feature has at most max_cat_to_onehot bins (its
 *   levels plus the missing bin, LightGBM's num_bin: 3 levels by default):
 *   every category alone on the left is a candidate, with lambda_l2;
 * - otherwise many-vs-many: the categories whose estimated rows in the leaf
 *   reach cat_smooth (and are > 0) are sorted by G / (H + cat_smooth), and
 *   the first k from either end (k <= min(max_cat_threshold, (used + 1) /
 *   2)) go left, scanned with hb_rule_cat_step, with lambda_l2 + cat_l2 in
 *   the children's gains; the categories left out of the sort go right;
 * - the parent's gain, which a split must beat by more than
 *   min_gain_to_split, is L(G, H) with lambda_l2 alone in both cases;
 * - the two leaves of a many-vs-many split keep lambda_l2 + cat_l2 for
 *   their outputs (hb_rule_child_l2). */

/* Whether a categorical feature with num_bin bins splits one-vs-rest. */
HB_RULE int hb_rule_cat_onehot(int num_bin, int max_cat_to_onehot) {
  return num_bin <= max_cat_to_onehot;
}

/* The L2 of the outputs of the two leaves a split makes (their values,
 * and their bounds under monotone constraints), for good: LightGBM's
 * children of a many-vs-many categorical split take lambda_l2 + cat_l2,
 * every other leaf lambda_l2. is_cat: the split is categorical, on a
 * feature of num_bin bins. */
HB_RULE double hb_rule_child_l2(int is_cat, int num_bin, int max_cat_to_onehot, double l2, double cat_l2) {
  return is_cat && !hb_rule_cat_onehot(num_bin, max_cat_to_onehot) ? l2 + cat_l2 : l2;
}

/* Whether a category with estimated rows cnt enters the sorted scan. */
HB_RULE int hb_rule_cat_used(int cnt, double cat_smooth) {
  return (cnt > 0) & ((double)cnt >= cat_smooth);
}

/* Whether a many-vs-many scan can have a candidate at all: its left side
 * is made of sorted categories, whose estimated rows sum to used_rows, and
 * needs min_data_in_leaf rows and min_data_per_group rows joined since the
 * start. (Saves sorting a wide factor's categories in leaves where they
 * are few.) */
HB_RULE int hb_rule_cat_can_split(int used_rows, int min_data_in_leaf, int min_data_per_group) {
  return used_rows >= min_data_in_leaf && used_rows >= min_data_per_group;
}

/* How many categories a scan from one end may put on the left, of `used`. */
HB_RULE int hb_rule_cat_max_left(int used, int max_cat_threshold) {
  int k = (used + 1) / 2;
  return max_cat_threshold < k ? max_cat_threshold : k;
}

/* One step of a many-vs-many scan from one end, after its k-th category
 * (cnt estimated rows) joined the left side, now nl rows and hessian hl of
 * the leaf's n and H. *group counts the rows added since the last candidate
 * (0 at the start of each end). Returns 1 when the first k are a candidate,
 * 0 to go on, -1 to stop this end: the left side needs min_data_in_leaf rows
 * and min_sum_hessian hessian, the right side as much and at least
 * min_data_per_group rows, and min_data_per_group rows must join between
 * two candidates. */
HB_RULE int hb_rule_cat_step(int cnt, int nl, double hl, int n, double H, int *group, int min_data_in_leaf,
                             double min_sum_hessian, int min_data_per_group) {
  *group += cnt;
  if (nl < min_data_in_leaf || hl < min_sum_hessian) return 0;
  if (n - nl < min_data_in_leaf || n - nl < min_data_per_group) return -1;
  if (H - hl < min_sum_hessian) return -1;
  if (*group < min_data_per_group) return 0;
  *group = 0;
  return 1;
}

/* Whether one-vs-rest candidate `bin` repeats a partition: when the leaf
 * has rows in two bins only, the second one alone is the complement of the
 * first one alone (the same gain; see hb_rule_cat_seen). nonempty: the
 * bins with an estimated row (hb_rule_count > 0), first_nonempty the
 * lowest of them. */
HB_RULE int hb_rule_cat_onehot_seen(int nonempty, int first_nonempty, int bin) {
  return nonempty == 2 && bin != first_nonempty;
}

/* Whether the last k categories of a many-vs-many scan (kmax from each
 * end, of `used` sorted) are a partition the first end already evaluated:
 * when no category with rows was left out of the sort (dropped == 0) they
 * are the complement of the first used - k, whose gain is the same; first[i]
 * says whether the first i + 1 were a candidate. LightGBM evaluates both
 * and keeps the first unless the second is strictly larger, which only
 * rounding can make it; skipping it keeps the first on every device. */
HB_RULE int hb_rule_cat_seen(int dropped, int used, int k, int kmax, const unsigned char *first) {
  return dropped == 0 && used - k >= 1 && used - k <= kmax && first[used - k - 1];
}

/* Sort key of a category when ordering a categorical feature's bins:
 * G / (H + cat_smooth) (LightGBM's many-vs-many rule). */
HB_RULE double hb_rule_cat_key(double g, double h, double cat_smooth) {
  double den = h + cat_smooth;
  return g / (den > 0 ? den : 1e-300);
}

#endif
