/* grow.c: leaf-wise tree growth with histogram subtraction (CPU learner).
 *
 * Every leaf owns a contiguous segment of one row-index array; splitting a
 * leaf stably partitions its segment, so a leaf's rows stay increasing (the
 * sparse histogram merge relies on it). The left child keeps the parent's
 * leaf index and the right child takes the next free index, as in LightGBM.
 * Only the smaller child's histogram is built; the larger one is the parent's
 * minus it, computed in the parent's slot.
 *
 * Parallel work per split: the partition of a large leaf (fixed chunks of
 * rows), the smaller child's histogram (hist.c), and one pass over the
 * features that subtracts the larger child's bins and scans both children;
 * the last two in one parallel region when the histogram takes the threads
 * (hb_hist_build_then). None of them changes a floating-point sum's order
 * with the thread count. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "grow.h"
#include "hist.h"
#include "hist_quant.h"
#include "split.h"
#include "split_quant.h"
#include "split_rules.h"
#include "math_rules.h"
#include "error.h"
#include "interrupt.h"
#include "threads.h"
#include "rng.h"
#include "dist.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Fewest rows per partition chunk (leaves of fewer than two chunks are
 * partitioned by one thread) and most chunks. */
#define PART_CHUNK 1024
#define PART_MAX_CHUNKS 256

/* Histogram bins (both children) below which a subtract-and-scan pass in
 * a region of its own (subtract_and_scan) runs on one thread: a region's
 * start would cost more than the pass. Inside the histogram's region
 * (scan_team) the team is already running and the items are shared
 * whatever their count. */
#define SCAN_PAR_MIN_BINS 4096

/* Items (a feature of one child) a thread takes at a time in the
 * subtract-and-scan pass: SCAN_TAKES_ALL takes in all, or two a thread
 * beyond 16 threads. Each take is an atomic on one counter every thread
 * shares: thousands of one-hot columns handed out one by one were a fifth
 * of a wide sparse training in libgomp, and at 16 threads two takes a
 * thread instead of one item a take cut the search of 100 items (50
 * features) by 8% (split-search-2026-12-02.md). Two takes a thread, not
 * one, leave room to even out items of unequal cost (features of 2 and of
 * 255 bins, skipped ones); 2 threads keep the 16 takes each they had. */
#define SCAN_TAKES_ALL 32
static int scan_chunk(int nitem, int nth) {
  const int takes = 2 * nth > SCAN_TAKES_ALL ? 2 * nth : SCAN_TAKES_ALL;
  const int c = nitem / takes;
  return c > 1 ? c : 1;
}

struct hb_grow_ws {
  int nrow, max_leaves, total_bins, nfeat;
  int *idx;               /* nrow: the partition of rows into leaves */
  int *tmp;               /* nrow: scratch of a partition */
  int *pos;               /* nrow: scratch of a partition from stored rows, or NULL (no sparse feature) */
  int *chunk_left;        /* left rows per partition chunk */
  int rb_twin;            /* rb is a twin of another workspace's row block (hb_grow_ws_create_beside) */
  const double *gh;       /* this tree's (gradient, hessian) of row r at 2r, 2r+1 (borrowed) */
  hb_rowblock_t *rb;      /* row-major bins of the dense features, or NULL */
  int *begin, *count;     /* per leaf */
  hb_leafsum_t *sum;      /* per leaf */
  hb_split_t *best;       /* per leaf */
  hb_split_t *per;        /* 2 nfeat: per-feature bests of the two children being scanned */
  uint8_t *seen;          /* 2 nfeat: whether per's feature was scanned (for the flags below) */
  /* skip_unsplittable, LightGBM's rule (SerialTreeLearner::FindBestSplits):
   * a feature in which a leaf's scan found no valid split is not scanned in
   * its subtree. Per leaf, okw words of flags, set where the feature may
   * still be scanned (kept, and read, only while skip_unsplit is on). */
  uint64_t *ok;
  int okw, skip_unsplit;
  int *slot;              /* per leaf: histogram slot or -1 */
  hb_histbin_t **pool;    /* max_leaves slots, allocated on first use */
  int *free_slots;        /* stack of free slot indices */
  int nfree;
  /* quantized training: the tree's quantization, integer sums per leaf and
   * the integer left sums of each leaf's best split (slots then hold
   * hb_qbin_t pairs, the same 16 bytes as hb_histbin_t) */
  const hb_qtree_t *qt;
  int64_t *qg, *qh, *qlg, *qlh;
  /* the refit's integer sums: nrefit threads' (g, h) per leaf, or NULL
   * (too many leaves times threads: leaves are then summed one by one) */
  int64_t *rsum;
  int nrefit;
  /* monotone constraints (LightGBM's basic method), or all NULL: the
   * constraint of each feature (-1, 0, 1) and the bounds [lo, hi] on each
   * leaf's unshrunk output */
  int8_t *mono;
  double *lo, *hi;
  double *leaf_l2;        /* per leaf: the L2 of its output (hb_rule_child_l2) */
  /* per-node feature choice and randomness (issue 26): the tree's id for the
   * random draws (hb_grow_ws_set_tree), each leaf's output before the
   * learning rate (path_smooth's parent output), the two leaf masks of a
   * scan, and interaction constraints: ngroups groups of features
   * (grp_feat, ngroups x nfeat flags; grp_col, ngroups x ncol) and each
   * leaf's groups still allowed (leaf_grp, gw words a leaf) */
  uint64_t tree_id;
  double *out;
  uint8_t *mask_s, *mask_b;
  int ngroups, gw;
  uint8_t *grp_feat, *grp_col;
  uint64_t *leaf_grp;
  /* Data-parallel training (dist.h): count holds this shard's rows of a
   * leaf, gcount every shard's (what the rules see); one process: gcount
   * is count. */
  const hb_dist_t *dist;  /* NULL: one process */
  int exact;              /* this tree's gradients are on exact_sums' grid (full precision) */
  int *gcount;
  /* quantized and data-parallel: a histogram's bins packed for the wire
   * (total_bins int64), and the most a row adds to a bin's g and h */
  int64_t *wire;
  int64_t row_g, row_h;
  /* Data-parallel split search (LightGBM's data-parallel learner): each
   * process owns the features fb0 .. fb1 - 1 (contiguous blocks of about
   * total_bins / size bins, in rank order; one process: all of them). A
   * leaf's histogram is summed over the processes into each one's block
   * alone (a reduce-scatter, half an allreduce's traffic), each searches
   * its block, and the block winners are exchanged and merged in rank
   * order: feature order, the one process's winner. blk[r] is rank r's
   * first feature (size + 1 of them), blk_v the reduction's blocks in
   * values, xbuf the exchange of winners (size x 2 records of xrec words). */
  int fb0, fb1;
  int any_sparse;         /* some feature is stored sparse (bundles are made of such) */
  int *blk;
  int64_t *blk_v, *xbuf;
  int xrec;
  /* phase timers (hb_grow_ws_profile): on, and the sums of grow.h's order */
  int prof_on;
  double prof[HB_GROW_PROFILE_N];
};

/* Data-parallel (d->dist): a failure here is agreed on before the row
 * block's first collective operation (bundling). share: a row block whose
 * rows this workspace reads through a twin, or NULL: its own. */
static hb_grow_ws_t *ws_create(const hb_config_t *cfg, const hb_dataset_t *d, const hb_rowblock_t *share) {
  const hb_dist_t *dist = d->dist && d->dist->size > 1 ? d->dist : NULL;
  hb_grow_ws_t *ws = hb_calloc(1, sizeof *ws);
  if (!ws) {
    hb_dist_agree(dist, hb_error_set(HB_ERR_NOMEM, "out of memory allocating the tree learner"),
                  "to create the tree learner");
    return NULL;
  }
  int L = cfg->num_leaves;
  size_t n = (size_t)d->nrow;
  ws->nrow = d->nrow;
  ws->max_leaves = L;
  ws->total_bins = d->total_bins;
  ws->nfeat = d->nfeat;
  ws->idx = hb_malloc(sizeof(int) * n);
  ws->tmp = hb_malloc(sizeof(int) * n);
  ws->chunk_left = hb_malloc(sizeof(int) * (PART_MAX_CHUNKS + 1));
  ws->begin = hb_malloc(sizeof(int) * (size_t)L);
  ws->leaf_l2 = hb_malloc(sizeof(double) * (size_t)L);
  ws->count = hb_malloc(sizeof(int) * (size_t)L);
  ws->dist = d->dist && d->dist->size > 1 ? d->dist : NULL;
  ws->gcount = ws->dist ? hb_malloc(sizeof(int) * (size_t)L) : ws->count;
  ws->sum = hb_malloc(sizeof(hb_leafsum_t) * (size_t)L);
  ws->best = hb_malloc(sizeof(hb_split_t) * (size_t)L);
  ws->per = hb_malloc(2 * sizeof(hb_split_t) * (size_t)d->nfeat);
  ws->seen = hb_malloc(2 * (size_t)d->nfeat + 1);
  ws->okw = (d->nfeat + 63) / 64 > 0 ? (d->nfeat + 63) / 64 : 1;
  ws->ok = hb_malloc(sizeof(uint64_t) * (size_t)L * (size_t)ws->okw);
  ws->skip_unsplit = cfg->skip_unsplittable;
  ws->slot = hb_malloc(sizeof(int) * (size_t)L);
  ws->pool = hb_calloc((size_t)L, sizeof(hb_histbin_t *));
  ws->free_slots = hb_malloc(sizeof(int) * (size_t)L);
  ws->out = hb_malloc(sizeof(double) * (size_t)L);
  ws->mask_s = hb_malloc((size_t)d->nfeat + 1);
  ws->mask_b = hb_malloc((size_t)d->nfeat + 1);
  ws->fb0 = 0;
  ws->fb1 = d->nfeat;
  ws->xrec = (int)((sizeof(hb_split_t) + 2 * sizeof(int64_t) + sizeof(int64_t) - 1) / sizeof(int64_t));
  if (ws->dist) {
    const int P = ws->dist->size;
    ws->blk = hb_malloc(sizeof(int) * (size_t)(P + 1));
    ws->blk_v = hb_malloc(sizeof(int64_t) * (size_t)(P + 1));
    ws->xbuf = hb_malloc(sizeof(int64_t) * 2 * (size_t)ws->xrec * (size_t)P);
    if (ws->blk) {  /* rank r's first feature: the first whose bins start at or after r / P of them */
      int f = 0;
      for (int r = 0; r <= P; r++) {
        while (f < d->nfeat && (int64_t)d->hist_offset[f] * P < (int64_t)r * d->total_bins) f++;
        ws->blk[r] = r == P ? d->nfeat : f;
      }
      ws->fb0 = ws->blk[ws->dist->rank];
      ws->fb1 = ws->blk[ws->dist->rank + 1];
    }
  }
  if (cfg->quantized) {
    ws->qg = hb_malloc(sizeof(int64_t) * (size_t)L);
    ws->qh = hb_malloc(sizeof(int64_t) * (size_t)L);
    /* per leaf, then two per feature of scratch for the split search
     * (subtract_and_scan); the refit reuses qlg as 2 max(L, nfeat) sums */
    size_t nq = (size_t)L + 2 * (size_t)d->nfeat;
    if (nq < 2 * (size_t)(L > d->nfeat ? L : d->nfeat)) nq = 2 * (size_t)(L > d->nfeat ? L : d->nfeat);
    ws->qlg = hb_malloc(sizeof(int64_t) * nq);
    ws->qlh = hb_malloc(sizeof(int64_t) * nq);
    ws->nrefit = hb_threads_use(cfg->nthreads);
    if ((size_t)L * (size_t)ws->nrefit <= ((size_t)1 << 20))
      ws->rsum = hb_malloc(sizeof(int64_t) * 2 * (size_t)L * (size_t)ws->nrefit);  /* NULL is allowed */
    if (ws->dist) {
      ws->wire = hb_malloc(sizeof(int64_t) * (size_t)(d->total_bins > 0 ? d->total_bins : 1));
      ws->row_g = hb_quant_grad_levels(cfg->grad_bits);
      ws->row_h = hb_quant_hess_levels(cfg->grad_bits);
    }
  }
  int st = HB_OK;
  if (!ws->idx || !ws->tmp || !ws->chunk_left || !ws->begin || !ws->leaf_l2 ||
      !ws->count || !ws->gcount || !ws->sum || !ws->best || !ws->per || !ws->seen || !ws->ok || !ws->slot || !ws->pool || !ws->free_slots ||
      !ws->out || !ws->mask_s || !ws->mask_b ||
      (ws->dist && (!ws->blk || !ws->blk_v || !ws->xbuf)) ||
      (cfg->quantized && (!ws->qg || !ws->qh || !ws->qlg || !ws->qlh || (ws->dist && !ws->wire))))
    st = HB_ERR_NOMEM;
  int any_sparse = 0;
  for (int f = 0; f < d->nfeat && !any_sparse; f++) any_sparse = d->store[f].sparse;
  ws->any_sparse = any_sparse;
  if (st == HB_OK && any_sparse && !(ws->pos = hb_malloc(sizeof(int) * (n > 0 ? n : 1)))) st = HB_ERR_NOMEM;
  /* Trivial features never split, so they stay out of the row block. */
  uint8_t *use = st == HB_OK ? hb_malloc((size_t)d->nfeat) : NULL;
  if (!use) st = HB_ERR_NOMEM;
  if (st == HB_ERR_NOMEM) hb_error_set(st, "out of memory allocating the tree learner's buffers");
  if (hb_dist_agree(dist, st, "to create the tree learner") != HB_OK) {
    hb_free(use);
    hb_grow_ws_free(ws);
    return NULL;
  }
  if (share) {
    ws->rb_twin = 1;
    if ((st = hb_rowblock_twin(share, d->total_bins, cfg->nthreads, &ws->rb)) != HB_OK)
      hb_error_set(st, "out of memory for the tree learner's histogram buffers");
  } else {
    for (int f = 0; f < d->nfeat; f++) use[f] = (uint8_t)!d->mappers[f].trivial;
    st = hb_rowblock_create_bundled(d, use, cfg->quantized, cfg->enable_bundle ? cfg->max_conflict_rate : -1.0,
                                    cfg->nthreads, &ws->rb);
  }
  hb_free(use);
  if (st != HB_OK) { hb_grow_ws_free(ws); return NULL; }
  return ws;
}

hb_grow_ws_t *hb_grow_ws_create(const hb_config_t *cfg, const hb_dataset_t *d) { return ws_create(cfg, d, NULL); }

hb_grow_ws_t *hb_grow_ws_create_beside(const hb_config_t *cfg, const hb_dataset_t *d, const hb_grow_ws_t *first) {
  const hb_rowblock_t *rb = first->rb;
  /* the same row block as first's would be made: the same data, features,
   * bundling and kind, so its rows are first's */
  const int same = rb && !first->rb_twin && !d->dist && hb_rowblock_shareable(rb);
  return ws_create(cfg, d, same ? rb : NULL);
}

void hb_grow_ws_free(hb_grow_ws_t *ws) {
  if (!ws) return;
  if (ws->pool)
    for (int s = 0; s < ws->max_leaves; s++) hb_free(ws->pool[s]);
  hb_free(ws->pool);
  hb_free(ws->free_slots);
  if (ws->rb_twin) hb_rowblock_twin_free(ws->rb);
  else hb_rowblock_free(ws->rb);
  hb_free(ws->idx); hb_free(ws->tmp); hb_free(ws->pos); hb_free(ws->chunk_left);
  if (ws->gcount != ws->count) hb_free(ws->gcount);
  hb_free(ws->begin); hb_free(ws->leaf_l2); hb_free(ws->count); hb_free(ws->sum); hb_free(ws->best); hb_free(ws->per);
  hb_free(ws->seen); hb_free(ws->ok);
  hb_free(ws->slot);
  hb_free(ws->qg); hb_free(ws->qh); hb_free(ws->qlg); hb_free(ws->qlh); hb_free(ws->rsum); hb_free(ws->wire);
  hb_free(ws->mono); hb_free(ws->lo); hb_free(ws->hi);
  hb_free(ws->out); hb_free(ws->mask_s); hb_free(ws->mask_b);
  hb_free(ws->blk); hb_free(ws->blk_v); hb_free(ws->xbuf);
  hb_free(ws->grp_feat); hb_free(ws->grp_col); hb_free(ws->leaf_grp);
  hb_free(ws);
}

size_t hb_grow_ws_bytes(const hb_grow_ws_t *ws) {
  const size_t n = (size_t)ws->nrow, L = (size_t)ws->max_leaves;
  return (ws->pos ? 3 : 2) * n * sizeof(int) + L * (size_t)ws->total_bins * sizeof(hb_histbin_t) +
         (ws->rb_twin ? hb_rowblock_twin_bytes(ws->rb, ws->total_bins) : hb_rowblock_bytes(ws->rb, ws->total_bins));
}

void hb_grow_ws_set_tree(hb_grow_ws_t *ws, uint64_t tree_id) { ws->tree_id = tree_id; }

void hb_grow_ws_profile(hb_grow_ws_t *ws, int on) {
  ws->prof_on = on != 0;
  memset(ws->prof, 0, sizeof ws->prof);
}

void hb_grow_ws_get_profile(const hb_grow_ws_t *ws, double out[HB_GROW_PROFILE_N]) {
  memcpy(out, ws->prof, sizeof ws->prof);
}

/* Phase k's timer (the order of grow.h's out[]): PROF_START before it,
 * PROF_ADD(k) after it; no clock read while the timers are off. */
enum { PROF_PARTITION, PROF_HIST, PROF_SPLIT, PROF_TREE, PROF_SPLITS };
#define PROF_START(t) const double t = ws->prof_on ? hb_threads_wtime() : 0.0
#define PROF_ADD(k, t) do { if (ws->prof_on) ws->prof[k] += hb_threads_wtime() - (t); } while (0)
/* A histogram's time (t0 to t1) also into its leaf's row class (grow.h). */
static void prof_hist_span(hb_grow_ws_t *ws, int nrows, double t0, double t1) {
  if (!ws->prof_on) return;
  const double dt = t1 - t0;
  int k = 0;
  while (k < HB_PROF_ROW_CLASSES - 1 && nrows >= (1024 << (2 * k))) k++;
  ws->prof[PROF_HIST] += dt;
  ws->prof[5 + k] += dt;
  ws->prof[5 + HB_PROF_ROW_CLASSES + k] += 1;
}
static void prof_hist_rows(hb_grow_ws_t *ws, int nrows, double t) {
  if (ws->prof_on) prof_hist_span(ws, nrows, t, hb_threads_wtime());
}

int hb_interaction_tables(const hb_dataset_t *d, int ngroups, const int *begin, const int *cols, uint8_t **grp_feat,
                          uint8_t **grp_col) {
  uint8_t *gf = hb_calloc((size_t)ngroups * (size_t)d->nfeat, 1), *gc = hb_calloc((size_t)ngroups * (size_t)d->ncol, 1);
  *grp_feat = *grp_col = NULL;
  if (!gf || !gc) {
    hb_free(gf); hb_free(gc);
    return hb_error_set(HB_ERR_NOMEM, "out of memory for interaction constraints");
  }
  for (int g = 0; g < ngroups; g++)
    for (int i = begin[g]; i < begin[g + 1]; i++) {
      const int c = cols[i];
      if (c < 0 || c >= d->ncol) {
        hb_free(gf); hb_free(gc);
        return hb_error_set(HB_ERR_INPUT, "interaction constraint %d names column %d of %d", g + 1, c + 1, d->ncol);
      }
      gc[(size_t)g * d->ncol + c] = 1;
      for (int f = d->col_first[c]; f < d->col_first[c + 1]; f++) gf[(size_t)g * d->nfeat + f] = 1;
    }
  *grp_feat = gf;
  *grp_col = gc;
  return HB_OK;
}

int hb_grow_ws_set_interactions(hb_grow_ws_t *ws, const hb_dataset_t *d, int ngroups, const int *begin,
                                const int *cols) {
  hb_free(ws->grp_feat); hb_free(ws->grp_col); hb_free(ws->leaf_grp);
  ws->grp_feat = ws->grp_col = NULL;
  ws->leaf_grp = NULL;
  ws->ngroups = ws->gw = 0;
  if (ngroups <= 0) return HB_OK;
  const int gw = (ngroups + 63) / 64;
  int st = hb_interaction_tables(d, ngroups, begin, cols, &ws->grp_feat, &ws->grp_col);
  if (st != HB_OK) return st;
  ws->leaf_grp = hb_calloc((size_t)ws->max_leaves * (size_t)gw, sizeof(uint64_t));
  if (!ws->leaf_grp) {
    hb_free(ws->grp_feat); hb_free(ws->grp_col);
    ws->grp_feat = ws->grp_col = NULL;
    return hb_error_set(HB_ERR_NOMEM, "out of memory for interaction constraints");
  }
  ws->ngroups = ngroups;
  ws->gw = gw;
  return HB_OK;
}

typedef struct { double u; int c; } node_draw;

static int node_draw_cmp(const void *a, const void *b) {
  const node_draw *x = a, *y = b;
  if (x->u != y->u) return x->u < y->u ? -1 : 1;
  return (x->c > y->c) - (x->c < y->c);
}

/* Whether the leaves of this tree choose features node by node. */
static int per_node(const hb_grow_ws_t *ws, const hb_config_t *cfg) {
  return ws->ngroups > 0 || cfg->feature_fraction_bynode < 1.0;
}

/* The features leaf l (node `uid` of the tree: 0 the root, then 2r - 1 and
 * 2r for the two children of the split that made leaf r) may split on, into
 * mask: the tree's active ones, those of the groups its branch still allows
 * (interaction constraints: LightGBM's rule, a group containing every
 * feature used above it), and with feature_fraction_bynode < 1 a sample of
 * round(fraction x the tree's columns) of those columns (at least one, at
 * most all), those with the smallest draws for (seed, tree, node, column),
 * whatever the thread count. Returns mask, or `active` when nothing is
 * chosen per node. */
static const uint8_t *leaf_mask(const hb_grow_ws_t *ws, const hb_config_t *cfg, const hb_dataset_t *d,
                                const uint8_t *active, int l, uint64_t uid, uint8_t *mask) {
  if (!per_node(ws, cfg)) return active;
  const int nf = d->nfeat, nc = d->ncol;
  for (int f = 0; f < nf; f++) mask[f] = (uint8_t)((!active || active[f]) && !d->mappers[f].trivial);
  /* The sample's size counts the tree's columns (m_tree); it is drawn from the columns the leaf's
   * interaction constraints allow (at most all of them), as LightGBM's ColSampler::GetByNode does.
   * Drawing from every column, then removing the forbidden ones, left most nodes below the root of
   * a constrained tree with nothing to split on. */
  int m_tree = 0;
  if (cfg->feature_fraction_bynode < 1.0) {
    for (int c = 0; c < nc; c++) {
      int any = 0;
      for (int f = d->col_first[c]; f < d->col_first[c + 1] && !any; f++) any = mask[f];
      m_tree += any;
    }
  }
  if (ws->ngroups > 0) {
    const uint64_t *g = ws->leaf_grp + (size_t)l * ws->gw;
    for (int f = 0; f < nf; f++) {
      if (!mask[f]) continue;
      int ok = 0;
      for (int k = 0; k < ws->ngroups && !ok; k++)
        ok = ((g[k >> 6] >> (k & 63)) & 1u) && ws->grp_feat[(size_t)k * nf + f];
      mask[f] = (uint8_t)ok;
    }
  }
  if (cfg->feature_fraction_bynode < 1.0) {
    node_draw *dr = hb_malloc(sizeof(node_draw) * (size_t)(nc > 0 ? nc : 1));
    if (dr) {
      int m = 0;
      const uint64_t head = hb_rng_key_tail(hb_rng_key_head(cfg->seed, HB_RNG_BYNODE, ws->tree_id), uid);
      for (int c = 0; c < nc; c++) {
        int any = 0;
        for (int f = d->col_first[c]; f < d->col_first[c + 1]; f++) any |= mask[f];
        if (!any) continue;
        dr[m].u = hb_rng_bits_unif(hb_rng_key_tail(head, (uint64_t)c));
        dr[m].c = c;
        m++;
      }
      int keep = (int)floor(m_tree * cfg->feature_fraction_bynode + 0.5);
      if (keep < 1) keep = 1;
      if (keep < m) {
        qsort(dr, (size_t)m, sizeof(node_draw), node_draw_cmp);
        for (int k = keep; k < m; k++)
          for (int f = d->col_first[dr[k].c]; f < d->col_first[dr[k].c + 1]; f++) mask[f] = 0;
      }
      hb_free(dr);
    }  /* without memory for the draws, the node takes every feature the leaf allows */
  }
  return mask;
}

int hb_monotone_features(const hb_dataset_t *d, const int *col_mono, int8_t **out) {
  *out = NULL;
  int any = 0;
  for (int c = 0; col_mono && c < d->ncol; c++) {
    if (col_mono[c] < -1 || col_mono[c] > 1)
      return hb_error_set(HB_ERR_INPUT, "monotone constraint %d of column %d is not -1, 0 or 1", col_mono[c], c + 1);
    for (int f = d->col_first[c]; col_mono[c] && f < d->col_first[c + 1]; f++)
      if (d->mappers[f].type == HB_FEAT_CATEGORICAL)
        return hb_error_set(HB_ERR_INPUT,
                            "column %d is categorical: monotone constraints apply to numeric columns only",
                            c + 1);
    any |= col_mono[c] != 0;
  }
  if (!any) return HB_OK;
  if (!(*out = hb_malloc((size_t)d->nfeat))) return hb_error_set(HB_ERR_NOMEM, "out of memory for monotone constraints");
  for (int f = 0; f < d->nfeat; f++) (*out)[f] = (int8_t)col_mono[d->feat_col[f]];
  return HB_OK;
}

int hb_grow_ws_set_monotone(hb_grow_ws_t *ws, const hb_dataset_t *d, const int *col_mono) {
  hb_free(ws->mono); hb_free(ws->lo); hb_free(ws->hi);
  ws->mono = NULL; ws->lo = ws->hi = NULL;
  int8_t *mono;
  int st = hb_monotone_features(d, col_mono, &mono);
  if (st != HB_OK || !mono) return st;
  ws->mono = mono;
  ws->lo = hb_malloc(sizeof(double) * (size_t)ws->max_leaves);
  ws->hi = hb_malloc(sizeof(double) * (size_t)ws->max_leaves);
  if (!ws->lo || !ws->hi) {
    hb_free(ws->mono); hb_free(ws->lo); hb_free(ws->hi);
    ws->mono = NULL; ws->lo = ws->hi = NULL;
    return hb_error_set(HB_ERR_NOMEM, "out of memory for monotone constraints");
  }
  return HB_OK;
}

/* Constraints on leaf l's split (none without monotone constraints). */
static hb_split_con_t leaf_con(const hb_grow_ws_t *ws, int l) {
  return ws->mono ? hb_split_con_make(ws->lo[l], ws->hi[l], ws->mono) : hb_split_con_make(-HUGE_VAL, HUGE_VAL, NULL);
}

/* The scan context of leaf l (node uid), with max_delta_step / path_smooth
 * and extra_trees set up. */
static void leaf_ctx(const hb_grow_ws_t *ws, const hb_config_t *cfg, int l, uint64_t uid, hb_split_leaf_t *c) {
  hb_split_leaf_init(c, cfg, ws->sum[l]);
  c->con = leaf_con(ws, l);
  hb_split_leaf_ext(c, ws->out[l]);
  if (cfg->extra_trees) {
    c->extra = 1;
    c->rkey = hb_rng_key_tail(hb_rng_key_head(cfg->seed, HB_RNG_EXTRA, ws->tree_id), uid);
  }
}

const int *hb_grow_leaf_rows(const hb_grow_ws_t *ws, int leaf, int *count) {
  *count = ws->count[leaf];
  return ws->idx + ws->begin[leaf];
}

void hb_grow_row_leaves(const hb_grow_ws_t *ws, int L, int r0, int r1, int *leaf_of) {
  for (int r = r0; r < r1; r++) leaf_of[r] = -1;
  for (int l = 0; l < L; l++) {
    const int *rows = ws->idx + ws->begin[l];
    const int cnt = ws->count[l];
    int lo = 0, hi = cnt;
    while (lo < hi) {  /* the first of the leaf's rows at or after r0 */
      const int mid = lo + (hi - lo) / 2;
      if (rows[mid] < r0) lo = mid + 1; else hi = mid;
    }
    for (int i = lo; i < cnt && rows[i] < r1; i++) leaf_of[rows[i]] = l;
  }
}

int *hb_grow_ws_scratch(hb_grow_ws_t *ws) { return ws->tmp; }

/* A free histogram slot, allocating the slot's memory on first use; -1 on
 * no memory, -2 when another process had none (data-parallel: every process
 * allocates the same slot at the same split, and they agree on it before the
 * histogram's sum). */
static int slot_take(hb_grow_ws_t *ws) {
  if (ws->nfree == 0) return -1;
  int s = ws->free_slots[--ws->nfree];
  if (!ws->pool[s]) {
    ws->pool[s] = hb_malloc(sizeof(hb_histbin_t) * (size_t)ws->total_bins);
    const int mine = ws->pool[s] != NULL;
    if (hb_dist_agree(ws->dist, mine ? HB_OK : HB_ERR_NOMEM, "to allocate a leaf histogram") != HB_OK) {
      hb_free(ws->pool[s]);
      ws->pool[s] = NULL;
      ws->free_slots[ws->nfree++] = s;
      return mine ? -2 : -1;
    }
  }
  return s;
}

static void slot_give(hb_grow_ws_t *ws, int leaf) {
  if (ws->slot[leaf] >= 0) ws->free_slots[ws->nfree++] = ws->slot[leaf];
  ws->slot[leaf] = -1;
}

/* A quantized histogram of this shard summed over the shards (dist.h),
 * packed on the wire: each bin's (g, h) as one integer g * 2^16 + h when
 * every partial sum of a bin fits 16-bit halves (|g| < 2^15, h < 2^16), as
 * g * 2^32 + h when it fits 32-bit halves, else the two int64 sums. A sum
 * of packed values is the packed sum while its halves fit, so the result is
 * the exact integer sum of the unpacked bins. The bound on any bin's partial
 * sums: the leaf's rows over all shards times the most a row adds, or, when
 * that is too big for 16-bit halves, the sum over the shards of each one's
 * largest bin (one more reduction of two integers). */
/* The reduction's blocks, each process's features' bins times `per` values
 * a bin (dist.h: hb_dist_sum_block). */
static const int64_t *block_values(hb_grow_ws_t *ws, const hb_dataset_t *d, int per) {
  for (int r = 0; r <= ws->dist->size; r++) ws->blk_v[r] = (int64_t)per * d->hist_offset[ws->blk[r]];
  return ws->blk_v;
}

static int qhist_sum_dist(hb_grow_ws_t *ws, const hb_dataset_t *d, hb_qbin_t *h, int64_t gcount) {
  const int64_t nb = ws->total_bins;
  /* this process's bins: the only ones it searches */
  const int64_t o0 = d->hist_offset[ws->fb0], o1 = d->hist_offset[ws->fb1];
  int64_t bg = gcount * ws->row_g, bh = gcount * ws->row_h;
  int st;
  if (!(bg < 32768 && bh < 65536)) {
    int64_t mx[2] = {0, 0};
    for (int64_t i = 0; i < nb; i++) {
      const int64_t a = h[i].g < 0 ? -h[i].g : h[i].g;
      if (a > mx[0]) mx[0] = a;
      if (h[i].h > mx[1]) mx[1] = h[i].h;
    }
    if ((st = hb_dist_sum_i64(ws->dist, mx, 2)) != HB_OK) return st;
    if (mx[0] < bg) bg = mx[0];
    if (mx[1] < bh) bh = mx[1];
  }
  if (bg < 32768 && bh < 65536) {
    int32_t *w = (int32_t *)ws->wire;
    for (int64_t i = 0; i < nb; i++) w[i] = (int32_t)(h[i].g * 65536 + h[i].h);
    if ((st = hb_dist_sum_block(ws->dist, w, block_values(ws, d, 1), HB_DIST_I32, HB_DIST_SUM)) != HB_OK) return st;
    for (int64_t i = o0; i < o1; i++) { h[i].g = hb_qpack_g(w[i]); h[i].h = hb_qpack_h(w[i]); }
    return HB_OK;
  }
  if (bg < ((int64_t)1 << 31) && bh < ((int64_t)1 << 32)) {
    int64_t *w = ws->wire;
    for (int64_t i = 0; i < nb; i++) w[i] = h[i].g * ((int64_t)1 << 32) + h[i].h;
    if ((st = hb_dist_sum_block(ws->dist, w, block_values(ws, d, 1), HB_DIST_I64, HB_DIST_SUM)) != HB_OK) return st;
    for (int64_t i = o0; i < o1; i++) {
      const int64_t lo = w[i] & (int64_t)0xffffffff;
      h[i].h = lo;
      h[i].g = (w[i] - lo) / ((int64_t)1 << 32);
    }
    return HB_OK;
  }
  return hb_dist_sum_block(ws->dist, h, block_values(ws, d, 2), HB_DIST_I64, HB_DIST_SUM);
}

/* Histogram of leaf `leaf` into slot s (rows == NULL: the leaf is every row, in order).
 * Data-parallel: this shard's histogram (a sparse feature's default bin
 * from this shard's totals of the leaf), then summed over the shards:
 * exactly for integer histograms and exact_sums' doubles, into this
 * process's block of features (fb0 .. fb1 - 1; the other bins are left
 * unspecified), in rank order and whole for other doubles. */
static int build_leaf_hist(hb_grow_ws_t *ws, const hb_dataset_t *d, int leaf, int s,
                           const uint8_t *active, int whole, int nthreads) {
  const int *rows = whole ? NULL : ws->idx + ws->begin[leaf];
  const int *lr = ws->idx + ws->begin[leaf];
  const int n = ws->count[leaf];
  if (ws->qt) {
    int64_t tg = ws->qg[leaf], th = ws->qh[leaf];
    if (ws->dist) {  /* this shard's totals of the leaf, which only sparse features' default bins read */
      tg = th = 0;
      for (int i = 0; ws->any_sparse && i < n; i++) { int32_t p = ws->qt->q[lr[i]]; tg += hb_qpack_g(p); th += hb_qpack_h(p); }
      memset(ws->pool[s], 0, sizeof(hb_qbin_t) * (size_t)ws->total_bins);
    }
    hb_qhist_build(d, ws->rb, rows, n, ws->qt->q, ws->qt->rows16, tg, th, active, (hb_qbin_t *)ws->pool[s],
                   nthreads);
    return ws->dist ? qhist_sum_dist(ws, d, (hb_qbin_t *)ws->pool[s], ws->gcount[leaf]) : HB_OK;
  }
  double tg = ws->sum[leaf].g, th = ws->sum[leaf].h;
  if (ws->dist) {  /* as above */
    tg = th = 0;
    for (int i = 0; ws->any_sparse && i < n; i++) { size_t r = (size_t)lr[i]; tg += ws->gh[2 * r]; th += ws->gh[2 * r + 1]; }
    memset(ws->pool[s], 0, sizeof(hb_histbin_t) * (size_t)ws->total_bins);
  }
  hb_hist_build(d, ws->rb, rows, n, ws->gh, tg, th, active, ws->pool[s], nthreads);
  if (!ws->dist) return HB_OK;
  /* on exact_sums' grid every partial sum is exact: MPI's own order gives
   * the same bins, summed into this process's block alone; other doubles
   * are summed whole in rank order (every process then holds every bin,
   * and still searches its block only) */
  return ws->exact ? hb_dist_sum_block(ws->dist, ws->pool[s], block_values(ws, d, 2), HB_DIST_F64, HB_DIST_SUM_EXACT)
                   : hb_dist_sum_f64(ws->dist, (double *)ws->pool[s], 2 * (int64_t)ws->total_bins);
}

static int can_split(const hb_config_t *cfg, const hb_tree_t *t, const hb_grow_ws_t *ws, int leaf) {
  if (cfg->max_depth > 0 && t->leaf_depth[leaf] >= cfg->max_depth) return 0;
  return hb_rule_splittable(ws->gcount[leaf], ws->sum[leaf].h, cfg->min_data_in_leaf,
                            cfg->min_sum_hessian_in_leaf);
}

/* How a partition sends rows left: goleft per bin of feature f, or (code
 * non-NULL) goleft per wide code of f's column (hist.h: the row block's
 * wcode; one two-byte read a row instead of walking a sparse part's
 * stored rows alongside the leaf's, a branch as good as a coin flip). */
typedef struct {
  int f;
  const uint8_t *goleft;
  const uint16_t *code;
  const uint8_t *bcol;  /* or non-NULL: goleft per bin of f's bundle, its column (one byte a row) */
} side_rule_t;

/* First k in [lo, n) with a[k] >= key in the increasing a (n if none),
 * galloping from lo: cheap when the answer is near lo. */
static int gallop(const int *a, int lo, int n, int key) {
  if (lo >= n || a[lo] >= key) return lo;
  int step = 1;
  while (lo + step < n && a[lo + step] < key) { lo += step; step *= 2; }
  int hi = lo + step < n ? lo + step : n;   /* a[lo] < key <= a[hi] (or hi = n) */
  while (hi - lo > 1) {
    int mid = lo + (hi - lo) / 2;
    if (a[mid] < key) lo = mid; else hi = mid;
  }
  return hi;
}

/* Which rows of rows[0..n) go left: side[i] = 1 for left; returns how many. */
static int decide(const hb_dataset_t *d, const side_rule_t *rule, const int *rows, int n, uint8_t *side) {
  const int f = rule->f;
  const uint8_t *goleft = rule->goleft;
  const hb_featstore_t *st = &d->store[f];
  int nl = 0;
  if (rule->code) {
    const uint16_t *code = rule->code;
    for (int i = 0; i < n; i++) {
      uint8_t s = goleft[code[rows[i]]];
      side[i] = s;
      nl += s;
    }
    return nl;
  }
  if (!st->sparse || rule->bcol) {
    const uint8_t *bins = rule->bcol ? rule->bcol : st->bins;
    for (int i = 0; i < n; i++) {
      uint8_t s = goleft[bins[rows[i]]];
      side[i] = s;
      nl += s;
    }
    return nl;
  }
  int dflt = goleft[d->mappers[f].default_bin];
  /* first stored entry at or after rows[0] */
  int lo = 0, hi = st->nnz;
  while (n > 0 && lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (st->rows[mid] < rows[0]) lo = mid + 1; else hi = mid;
  }
  /* Walk the stored rows alongside the leaf's; a leaf much sparser than the
   * feature gallops over the entries between its rows (a small leaf of a
   * feature with many entries costs its rows times a logarithm, not a walk
   * over every entry in its row range). */
  int k = lo, nnz = st->nnz;
  const int *sr = st->rows;
  for (int i = 0; i < n; i++) {
    int row = rows[i];
    k = gallop(sr, k, nnz, row);
    uint8_t s = (uint8_t)((k < nnz && sr[k] == row) ? goleft[st->vals[k]] : dflt);
    side[i] = s;
    nl += s;
  }
  return nl;
}

/* Stable partition of rows[0..n) by the split (goleft per bin of feature
 * f): left rows to out[0..nl) in order, right rows to out[nl..n) in reverse
 * order (so that one write per row, to a position chosen without a branch,
 * does it); returns nl. Sides are decided a block at a time into a small
 * buffer on the stack. */
#define SIDE_BLOCK 2048
static int split_rows(const hb_dataset_t *d, const side_rule_t *rule, const int *rows, int n, int *out) {
  uint8_t side[SIDE_BLOCK];
  int pl = 0, pr = n - 1;
  for (int i0 = 0; i0 < n; i0 += SIDE_BLOCK) {
    int m = n - i0 < SIDE_BLOCK ? n - i0 : SIDE_BLOCK;
    decide(d, rule, rows + i0, m, side);
    for (int i = 0; i < m; i++) {
      int s = side[i];
      out[pr ^ ((pl ^ pr) & -s)] = rows[i0 + i];   /* s ? pl : pr, without a branch to mispredict */
      pl += s;
      pr -= 1 - s;
    }
  }
  return pl;
}

/* Stable partition of the increasing rows[0..cnt) on sparse feature f
 * (goleft per bin) from its stored rows, into out; returns the left count,
 * or -1 when the feature stores more than cnt / 4 rows in the leaf's range
 * (deciding every row is then as cheap). A row off the feature's default
 * bin is found among the leaf's by galloping; every other row goes the
 * default bin's way and keeps its place, so the rows are copied in runs
 * between the few that go the other way (one-hot splits peel off a few
 * rows of a large leaf: deciding and moving each of its rows made the
 * partitions a third of workload 5's training). pos: scratch of cnt ints. */
static int partition_stored(const hb_dataset_t *d, int f, const uint8_t *goleft, const int *rows, int cnt,
                            int *pos, int *out) {
  const hb_featstore_t *st = &d->store[f];
  if (cnt == 0) return 0;
  const int k0 = gallop(st->rows, 0, st->nnz, rows[0]);
  const int k1 = gallop(st->rows, k0, st->nnz, rows[cnt - 1] + 1);
  if ((long long)(k1 - k0) * 4 > cnt) return -1;
  const uint8_t dside = goleft[d->mappers[f].default_bin];
  int m = 0;
  for (int k = k0, i = 0; k < k1; k++) {
    if (goleft[st->vals[k]] == dside) continue;   /* goes with the default bin's rows */
    i = gallop(rows, i, cnt, st->rows[k]);
    if (i < cnt && rows[i] == st->rows[k]) pos[m++] = i;
  }
  /* the other way's rows first when they go left, after the rest when they go right */
  int *other = dside ? out + (cnt - m) : out, *same = dside ? out : out + m;
  for (int j = 0, from = 0; j <= m; j++) {
    const int to = j < m ? pos[j] : cnt;
    memcpy(same, rows + from, sizeof(int) * (size_t)(to - from));
    same += to - from;
    if (j < m) other[j] = rows[to];
    from = to + 1;
  }
  return dside ? cnt - m : m;
}

/* Stable partition of leaf l's rows: left stays in l, right moves to leaf r.
 * Large leaves are cut into chunks (a stable partition has one result, so
 * the chunking only affects speed): each chunk splits its rows into its own
 * stretch of tmp, and once every chunk's left count is known, the chunks are
 * copied to their places. */
static int partition(hb_grow_ws_t *ws, const hb_dataset_t *d, const hb_split_t *sp, int l, int r,
                     int nthreads) {
  int f = sp->feature;
  const hb_binmapper_t *m = &d->mappers[f];
  uint8_t goleft[HB_MAX_NUM_BIN];
  for (int b = 0; b < m->num_bin; b++) goleft[b] = (uint8_t)hb_split_bin_left(sp, b);
  side_rule_t rule = { f, goleft, NULL, NULL };
  /* A bundled feature: its side from its bundle's bin, one byte a row.
   * Without conflicts that bin names the one member off its default, or
   * none, so rows go where the feature's own bins send them. A row where
   * members conflict holds the first member's bin, and goes where the
   * histograms counted it (the split's sums and the children's totals must
   * agree with the rows they get; sending it by its own value instead left
   * leaf values off by the conflicting rows, AUC 0.56 against 0.71 at
   * max_conflict_rate 0.05 in test-bundle.R's data), as LightGBM does;
   * prediction sends it by its value. */
  uint8_t btab[HB_BUNDLE_MAX_BIN];
  const hb_bundles_t *bd = ws->rb ? ws->rb->bundles : NULL;
  if (bd && bd->bundle_of[f] >= 0) {
    const int j = bd->bundle_of[f];
    hb_bundle_side_table(bd, d, j, f, goleft, btab);
    rule.goleft = btab;
    rule.bcol = bd->col + (size_t)j * (size_t)d->nrow;
  }
  /* A sparse part of a wide factor: its side per code of the column (the
   * other parts' codes and nparts * 256 fall in its missing bin). */
  uint8_t ctab[HB_MAX_COLUMN_FEATURES * 256 + 1];
  const int col = d->feat_col[f];
  if (ws->rb && ws->rb->wcode && ws->rb->wcode[col] && d->store[f].sparse) {
    const int first = d->col_first[col], np = d->col_first[col + 1] - first;
    memset(ctab, goleft[m->num_bin - 1], (size_t)np * 256 + 1);
    memcpy(ctab + (size_t)(f - first) * 256, goleft, (size_t)m->num_bin);
    rule.goleft = ctab;
    rule.code = ws->rb->wcode[col];
  }
  int begin = ws->begin[l], cnt = ws->count[l];
  int *rows = ws->idx + begin, *tmp = ws->tmp;
  int nl = -1;
  int nth = hb_threads_use(nthreads);
  /* A sparse feature whose rows go where its own bins send them (not in
   * a bundle with conflicts; a wide factor's part always does, its stored
   * rows being its own bins, the other parts' rows in its default, missing
   * bin): from its stored rows, when it stores few of the leaf's. */
  if (d->store[f].sparse && ws->pos && (rule.code || !(rule.bcol && bd->conflicts[bd->bundle_of[f]] > 0))) {
    nl = partition_stored(d, f, goleft, rows, cnt, ws->pos, tmp);
    if (nl >= 0) memcpy(rows, tmp, sizeof(int) * (size_t)cnt);
  }
  if (nl >= 0) {
    /* done */
  } else if (nth < 2 || cnt < 2 * PART_CHUNK) {
    nl = split_rows(d, &rule, rows, cnt, tmp);
    memcpy(rows, tmp, sizeof(int) * (size_t)nl);
    for (int i = nl, j = cnt - 1; i < cnt; i++, j--) rows[i] = tmp[j];
  } else {
    /* a few chunks per thread, for balance */
    int nchunk = 4 * nth;
    if (nchunk > cnt / PART_CHUNK) nchunk = cnt / PART_CHUNK;
    if (nchunk > PART_MAX_CHUNKS) nchunk = PART_MAX_CHUNKS;
    int *cl = ws->chunk_left;
HB_OMP(parallel num_threads(nth))
    {
HB_OMP(for schedule(static))
      for (int c = 0; c < nchunk; c++) {
        int i0 = (int)((long long)c * cnt / nchunk), i1 = (int)((long long)(c + 1) * cnt / nchunk);
        cl[c] = split_rows(d, &rule, rows + i0, i1 - i0, tmp + i0);
      }
      /* every thread takes the prefix sums of the chunks' left counts
       * itself (at most PART_MAX_CHUNKS additions), instead of one thread
       * while the others wait at one more barrier */
      int pre[PART_MAX_CHUNKS + 1];
      pre[0] = 0;
      for (int c = 0; c < nchunk; c++) pre[c + 1] = pre[c] + cl[c];
      const int total_left = pre[nchunk];
HB_OMP(for schedule(static))
      for (int c = 0; c < nchunk; c++) {
        int i0 = (int)((long long)c * cnt / nchunk), i1 = (int)((long long)(c + 1) * cnt / nchunk);
        int nlc = pre[c + 1] - pre[c];
        memcpy(rows + pre[c], tmp + i0, sizeof(int) * (size_t)nlc);
        int *dst = rows + total_left + (i0 - pre[c]);
        for (int j = i1 - 1; j >= i0 + nlc; j--) *dst++ = tmp[j];
      }
    }
    nl = 0;
    for (int c = 0; c < nchunk; c++) nl += cl[c];
  }
  /* The split's counts were estimates (split_rules.h); from here on exact. */
  ws->count[l] = nl;
  ws->begin[r] = begin + nl;
  ws->count[r] = cnt - nl;
  return HB_OK;
}

/* One child's scan context: full precision (double sums; max_delta_step,
 * path_smooth and extra_trees set up by leaf_ctx) or quantized (integer
 * sums and the tree's scales, the GPU's search). */
typedef struct {
  hb_split_leaf_t c;
  hb_qsplit_leaf_t q;
} child_ctx_t;

/* Leaf l's context (node uid) for the training's kind; returns whether the
 * leaf may split at all. */
static int child_ctx(const hb_grow_ws_t *ws, const hb_config_t *cfg, int l, uint64_t uid, child_ctx_t *cc) {
  const hb_qtree_t *qt = ws->qt;
  if (!qt) {
    leaf_ctx(ws, cfg, l, uid, &cc->c);
    return cc->c.splittable;
  }
  hb_qsplit_leaf_init(&cc->q, cfg, ws->qg[l], ws->qh[l], ws->gcount[l], qt->sg, qt->sh);
  cc->q.con = leaf_con(ws, l);
  return cc->q.splittable;
}

/* The bins of feature f (nb from offset off) of the larger child: the
 * parent's hl less the smaller child's hs. The one place the two kinds
 * differ here is the pair's type: double sums (rounded, as before) or
 * integer sums (exact); both are 16 bytes, so the slots serve either. */
#define SUBTRACT_BINS(T, hl, hs, off, nb)                                          \
  do {                                                                            \
    T *a_ = (T *)(void *)(hl) + (off);                                            \
    const T *b_ = (const T *)(const void *)(hs) + (off);                          \
    for (int k_ = 0; k_ < (nb); k_++) { a_[k_].g -= b_[k_].g; a_[k_].h -= b_[k_].h; } \
  } while (0)

/* After a split of a leaf into `small` (histogram built in slot ss) and
 * `large`: when the larger child may split (scan_prepare's large_slot >= 0)
 * turn the parent's histogram into the larger child's by subtracting the
 * smaller's, and find the best split of each child that may split. One
 * pass (scan_team or subtract_and_scan, then scan_finish) does all of it,
 * over 2 nf items: a
 * feature of the smaller child (a scan of its histogram, only read) and the
 * same feature of the larger child (subtract, then scan), so that 16
 * threads share 56 items of a 28-feature data set, not 28 (the larger
 * item waited for the smaller's scan before). Each feature's bests are
 * kept apart per child and merged in feature order afterwards, so the
 * winner is the sequential scan's whatever the thread count.
 * Quantized training (ws->qt) takes the same pass over integer histograms:
 * exact subtraction and the GPU's integer search (split_quant.h), the
 * winners' integer left sums going to qlg / qlh of their leaves. */
static int bests_agree(hb_grow_ws_t *ws, int l0, int l1);

/* One subtract-and-scan pass: what its items read and where they write. */
typedef struct {
  const hb_dataset_t *d;
  const uint8_t *active, *ms, *mb;
  child_ctx_t cs, cb;
  int q, scan_small, scan_large, f0, nfb, small, large, skip;
  hb_histbin_t *hs, *hl;
  hb_split_t *ps, *pb;
  uint8_t *seen;       /* 2 nfeat: the smaller child's features scanned, then the larger's */
  const uint64_t *okp; /* the parent's flags (the left child's row until scan_finish writes it) */
  int64_t *lgs, *lhs;  /* quantized: the per-feature winners' integer left sums, 2 per feature */
  double t_start;      /* profiling: when the pass started (after the histogram) */
} scan_job_t;

static void scan_prepare(scan_job_t *j, hb_grow_ws_t *ws, const hb_config_t *cfg, const hb_dataset_t *d,
                         const uint8_t *active, int small, int scan_small, int large, int large_slot, int scan_large,
                         const uint8_t *ms, const uint8_t *mb, uint64_t us, uint64_t ub) {
  j->d = d;
  j->active = active;
  j->ms = ms;
  j->mb = mb;
  j->q = ws->qt != NULL;
  j->scan_small = child_ctx(ws, cfg, small, us, &j->cs) && scan_small;
  j->scan_large = child_ctx(ws, cfg, large, ub, &j->cb) && scan_large && large_slot >= 0;
  j->small = small;
  j->large = large;
  j->hs = ws->pool[ws->slot[small]];
  j->hl = large_slot >= 0 ? ws->pool[large_slot] : NULL;
  j->f0 = ws->fb0;
  j->nfb = ws->fb1 - ws->fb0;
  j->ps = ws->per;
  j->pb = ws->per + d->nfeat;
  j->seen = ws->seen;
  j->okp = ws->ok + (size_t)(small < large ? small : large) * (size_t)ws->okw;
  j->lgs = j->q ? ws->qlg + ws->max_leaves : NULL;
  j->lhs = j->q ? ws->qlh + ws->max_leaves : NULL;
  j->skip = ws->skip_unsplit;
  j->t_start = 0.0;
}

/* skip_unsplittable: feature f, which the node's own sample (ms, mb: by node,
 * interaction constraints) left out, scanned for its flag alone, as LightGBM
 * scans every feature its parent allows and only then drops the unsampled
 * from the winners (ComputeBestSplitForFeature): 1 (seen, no split: the
 * flag clears) when no candidate is valid, else 0 (the parent's flag stays). */
static uint8_t flag_only(const hb_dataset_t *d, int q, const child_ctx_t *c, const void *hist, int f) {
  hb_split_t s;
  int64_t lg = 0, lh = 0;
  s.feature = -1;
  s.gain = -INFINITY;
  if (q) hb_qsplit_feature(&c->q, d, (const hb_qbin_t *)hist, f, &s, &lg, &lh);
  else hb_split_feature(&c->c, d, (const hb_histbin_t *)hist, f, &s);
  return (uint8_t)(s.feature < 0);
}

/* Item w of the pass: feature f0 + w / 2 of the smaller child (w even) or
 * of the larger one. */
static void scan_item(const scan_job_t *j, int w) {
  const hb_dataset_t *d = j->d;
  const int f = j->f0 + (w >> 1), q = j->q;
  /* with the rule, only where the parent's scan found a split in f */
  const int inherit = !j->skip || (int)((j->okp[f >> 6] >> (f & 63)) & 1u);
  if (!(w & 1)) {  /* the smaller child: its histogram is only read */
    hb_split_t *p = &j->ps[f];
    p->feature = -1; p->gain = -INFINITY;
    j->seen[f] = 0;
    if ((!j->active || j->active[f]) && j->scan_small && inherit) {
      if (!j->ms || j->ms[f]) {
        j->seen[f] = 1;
        if (q) hb_qsplit_feature(&j->cs.q, d, (const hb_qbin_t *)(void *)j->hs, f, p, &j->lgs[2 * f], &j->lhs[2 * f]);
        else hb_split_feature(&j->cs.c, d, j->hs, f, p);
      } else if (j->skip) {
        j->seen[f] = flag_only(d, q, &j->cs, j->hs, f);
      }
    }
    return;
  }
  hb_split_t *p = &j->pb[f];
  p->feature = -1; p->gain = -INFINITY;
  j->seen[d->nfeat + f] = 0;
  if (j->active && !j->active[f]) return;
  if (j->hl) {
    const int off = d->hist_offset[f], nb = d->hist_offset[f + 1] - off;
    if (q) SUBTRACT_BINS(hb_qbin_t, j->hl, j->hs, off, nb);
    else SUBTRACT_BINS(hb_histbin_t, j->hl, j->hs, off, nb);
  }
  if (j->scan_large && inherit) {
    if (!j->mb || j->mb[f]) {
      j->seen[d->nfeat + f] = 1;
      if (q) hb_qsplit_feature(&j->cb.q, d, (const hb_qbin_t *)(void *)j->hl, f, p, &j->lgs[2 * f + 1], &j->lhs[2 * f + 1]);
      else hb_split_feature(&j->cb.c, d, j->hl, f, p);
    } else if (j->skip) {
      j->seen[d->nfeat + f] = flag_only(d, q, &j->cb, j->hl, f);
    }
  }
}

/* The pass's items shared out over the calling team (hb_team_fn): run
 * inside the histogram's parallel region, after its barrier. */
static void scan_team(void *arg, int nth) {
  scan_job_t *j = arg;
  const int chunk = scan_chunk(2 * j->nfb, nth);
  (void)chunk;
  if (hb_threads_id() == 0 && j->t_start < 0) j->t_start = hb_threads_wtime();  /* thread 0's alone */
HB_OMP(for schedule(dynamic, chunk) nowait)
  for (int w = 0; w < 2 * j->nfb; w++) scan_item(j, w);
}

/* The threads a pass takes in a region of its own: one when the bins of
 * both children are few. */
static int scan_threads(const scan_job_t *j, const hb_dataset_t *d, int nthreads) {
  const int nb = d->hist_offset[j->f0 + j->nfb] - d->hist_offset[j->f0];
  if (nb * (1 + j->scan_small + j->scan_large) < SCAN_PAR_MIN_BINS * 2) return 1;
  return hb_threads_use(nthreads);
}

/* The children's winners from the per-feature bests, in feature order. */
static int scan_finish(hb_grow_ws_t *ws, const scan_job_t *j) {
  const int small = j->small, large = j->large, q = j->q;
  const hb_split_t *ps = j->ps, *pb = j->pb;
  hb_split_t *bs = &ws->best[small], *bb = &ws->best[large];
  bs->feature = -1; bs->gain = -INFINITY;
  bb->feature = -1; bb->gain = -INFINITY;
  for (int f = j->f0; f < j->f0 + j->nfb; f++) {
    if (ps[f].feature >= 0 && ps[f].gain > bs->gain) {
      *bs = ps[f];
      if (q) { ws->qlg[small] = j->lgs[2 * f]; ws->qlh[small] = j->lhs[2 * f]; }
    }
    if (pb[f].feature >= 0 && pb[f].gain > bb->gain) {
      *bb = pb[f];
      if (q) { ws->qlg[large] = j->lgs[2 * f + 1]; ws->qlh[large] = j->lhs[2 * f + 1]; }
    }
  }
  if (!ws->skip_unsplit) return bests_agree(ws, small, large);
  /* the children's flags: the parent's, less the features their own scans
   * found no split in; the right child's row first, the left's (the
   * parent's) in place */
  const int nf = j->d->nfeat, left = small < large ? small : large, right = small < large ? large : small;
  const uint8_t *seen_l = left == small ? j->seen : j->seen + nf, *seen_r = left == small ? j->seen + nf : j->seen;
  const hb_split_t *per_l = left == small ? ps : pb, *per_r = left == small ? pb : ps;
  uint64_t *P = ws->ok + (size_t)left * (size_t)ws->okw, *R = ws->ok + (size_t)right * (size_t)ws->okw;
  memcpy(R, P, sizeof(uint64_t) * (size_t)ws->okw);
  for (int f = j->f0; f < j->f0 + j->nfb; f++) {
    if (seen_r[f] && per_r[f].feature < 0) R[f >> 6] &= ~((uint64_t)1 << (f & 63));
    if (seen_l[f] && per_l[f].feature < 0) P[f >> 6] &= ~((uint64_t)1 << (f & 63));
  }
  return bests_agree(ws, small, large);
}

/* The pass in a region of its own (the histogram took one thread, or is
 * summed over processes), then the winners. */
static int subtract_and_scan(hb_grow_ws_t *ws, const hb_dataset_t *d, scan_job_t *j, int nthreads) {
  const int nth = scan_threads(j, d, nthreads), chunk = scan_chunk(2 * j->nfb, nth);
  (void)chunk;  /* unused without OpenMP */
HB_OMP(parallel for num_threads(nth) schedule(dynamic, chunk) if (nth > 1))
  for (int w = 0; w < 2 * j->nfb; w++) scan_item(j, w);
  return scan_finish(ws, j);
}
#undef SUBTRACT_BINS

/* Data-parallel: every process's winners of leaves l0 and l1 (l1 < 0:
 * l0 alone; with their integer left sums when quantized) exchanged, and
 * the first of the best in rank order kept: blocks are in feature order,
 * each process's winner is the first best of its block, so this is the
 * one process's winner, on every process. One allreduce: each process's
 * records in its own place of a zeroed buffer, summed as integers. */
static int bests_agree(hb_grow_ws_t *ws, int l0, int l1) {
  if (!ws->dist) return HB_OK;
  const int P = ws->dist->size, k = l1 >= 0 ? 2 : 1, leaf[2] = {l0, l1};
  const size_t rec = (size_t)ws->xrec;
  int64_t *x = ws->xbuf;
  memset(x, 0, sizeof(int64_t) * rec * (size_t)k * (size_t)P);
  for (int j = 0; j < k; j++) {
    int64_t *mine = x + ((size_t)ws->dist->rank * (size_t)k + (size_t)j) * rec;
    memcpy(mine, &ws->best[leaf[j]], sizeof(hb_split_t));
    if (ws->qt) {
      int64_t q2[2] = {ws->qlg[leaf[j]], ws->qlh[leaf[j]]};
      memcpy((char *)mine + sizeof(hb_split_t), q2, sizeof q2);
    }
  }
  const int st = hb_dist_sum_i64(ws->dist, x, (int64_t)(rec * (size_t)k * (size_t)P));
  if (st != HB_OK) return st;
  for (int j = 0; j < k; j++) {
    hb_split_t *b = &ws->best[leaf[j]];
    b->feature = -1;
    b->gain = -INFINITY;
    for (int r = 0; r < P; r++) {
      const int64_t *rr = x + ((size_t)r * (size_t)k + (size_t)j) * rec;
      hb_split_t c;
      memcpy(&c, rr, sizeof c);
      if (c.feature < 0 || !(c.gain > b->gain)) continue;
      *b = c;
      if (ws->qt) {
        int64_t q2[2];
        memcpy(q2, (const char *)rr + sizeof(hb_split_t), sizeof q2);
        ws->qlg[leaf[j]] = q2[0];
        ws->qlh[leaf[j]] = q2[1];
      }
    }
  }
  return HB_OK;
}

/* The root's scan over this process's features allowed by `m` (NULL: all),
 * full precision or quantized: each feature's best alone, merged in feature
 * order (the sequential scan's winner, whatever the thread count), and the
 * root's flags: every feature, less those its scan found no split in. */
static void scan_root(hb_grow_ws_t *ws, const hb_config_t *cfg, const hb_dataset_t *d, const uint8_t *active,
                      const uint8_t *m, int slot, int nthreads) {
  const int q = ws->qt != NULL, f0 = ws->fb0, f1 = ws->fb1;
  child_ctx_t cc;
  const int can = child_ctx(ws, cfg, 0, 0, &cc);
  hb_split_t *per = ws->per;
  uint8_t *seen = ws->seen;
  int64_t *lg = q ? ws->qlg + ws->max_leaves : NULL, *lh = q ? ws->qlh + ws->max_leaves : NULL;
  const int nth = f1 - f0 < 64 ? 1 : hb_threads_use(nthreads);  /* few features: cheaper than starting threads */
  (void)nth;  /* unused without OpenMP */
HB_OMP(parallel for num_threads(nth) schedule(dynamic, 4) if (nth > 1))
  for (int f = f0; f < f1; f++) {
    per[f].feature = -1;
    per[f].gain = -INFINITY;
    seen[f] = 0;
    if (!can || (active && !active[f])) continue;
    if (m && !m[f]) {  /* left out by the root's sample: its flag alone (flag_only) */
      if (ws->skip_unsplit) seen[f] = flag_only(d, q, &cc, ws->pool[slot], f);
      continue;
    }
    seen[f] = 1;
    if (q) hb_qsplit_feature(&cc.q, d, (const hb_qbin_t *)ws->pool[slot], f, &per[f], &lg[2 * f], &lh[2 * f]);
    else hb_split_feature(&cc.c, d, ws->pool[slot], f, &per[f]);
  }
  hb_split_t *best = &ws->best[0];
  best->feature = -1;
  best->gain = -INFINITY;
  uint64_t *row = ws->ok;  /* leaf 0's flags, with the rule */
  for (int w = 0; ws->skip_unsplit && w < ws->okw; w++) row[w] = ~(uint64_t)0;
  for (int f = f0; f < f1; f++) {
    if (ws->skip_unsplit && seen[f] && per[f].feature < 0) row[f >> 6] &= ~((uint64_t)1 << (f & 63));
    if (per[f].feature >= 0 && per[f].gain > best->gain) {
      *best = per[f];
      if (q) { ws->qlg[0] = lg[2 * f]; ws->qlh[0] = lh[2 * f]; }
    }
  }
}

/* y rounded to the nearest integer, ties to even (llrint, and the GPU's
 * __double2ll_rn) without a library call: adding and taking away 1.5 * 2^52
 * leaves the nearest integer of any |y| < 2^51. */
static inline long long round_ll(double y) {
  const double c = HB_ROUND_MAGIC;
  return fabs(y) < 2251799813685248.0 ? (long long)((y + c) - c) : llrint(y);
}

/* The refit's fixed-point sums of the full-precision gradients of each
 * leaf's rows (sg, sh: L each) read row by row: each row's leaf into
 * ws->tmp (-1 for rows in no leaf: out of the bag), then the rows in
 * order, each thread's sums apart and added at the end. The gradients are
 * then read once, in order, not leaf by leaf at scattered rows (twice as
 * fast here), and the integer sums are the same in any order. */
static void refit_sums_by_row(hb_grow_ws_t *ws, int L, const double *gh, double pg, double ph, int nth,
                              int64_t *sg, int64_t *sh) {
  int *leaf_of = ws->tmp;
  const int n = ws->nrow;
  if (nth > ws->nrefit) nth = ws->nrefit;
  memset(ws->rsum, 0, sizeof(int64_t) * 2 * (size_t)L * (size_t)ws->nrefit);
  (void)nth;
  const int blk = hb_row_leaf_block(L), nblk = (int)(((int64_t)n + blk - 1) / blk);
HB_OMP(parallel num_threads(nth))
  {
HB_OMP(for schedule(dynamic, 1))
    for (int q = 0; q < nblk; q++) {
      const int r0 = q * blk;
      hb_grow_row_leaves(ws, L, r0, n - r0 > blk ? r0 + blk : n, leaf_of);
    }
    int64_t *a = ws->rsum + (size_t)hb_threads_id() * 2 * (size_t)L;
#if defined(__SSE2__)
    /* round_ll on the (g, h) pair at once: with y = x * 2^e, |y| < 2^51
     * (hb_fixed_exponent gave |x| 2^e <= 2^62 / n, and n >= 65536 here), the
     * double y + 1.5 * 2^52 holds round(y) in its low bits, so its bits less
     * those of 1.5 * 2^52 are the integer round_ll gives */
    const __m128d P = _mm_set_pd(ph, pg), C = _mm_set1_pd(HB_ROUND_MAGIC);
    const __m128i CB = _mm_castpd_si128(C);
HB_OMP(for schedule(static))
    for (int r = 0; r < n; r++) {
      int l = leaf_of[r];
      if (l < 0) continue;
      __m128i v = _mm_sub_epi64(_mm_castpd_si128(_mm_add_pd(_mm_mul_pd(_mm_loadu_pd(gh + 2 * (size_t)r), P), C)), CB);
      __m128i *s = (__m128i *)(a + 2 * l);
      _mm_storeu_si128(s, _mm_add_epi64(_mm_loadu_si128(s), v));
    }
#else
HB_OMP(for schedule(static))
    for (int r = 0; r < n; r++) {
      int l = leaf_of[r];
      if (l < 0) continue;
      a[2 * l] += round_ll(gh[2 * (size_t)r] * pg);
      a[2 * l + 1] += round_ll(gh[2 * (size_t)r + 1] * ph);
    }
#endif
  }
  for (int l = 0; l < L; l++) {
    int64_t g = 0, h = 0;
    for (int t = 0; t < ws->nrefit; t++) { g += ws->rsum[(size_t)t * 2 * L + 2 * l]; h += ws->rsum[(size_t)t * 2 * L + 2 * l + 1]; }
    sg[l] = g;
    sh[l] = h;
  }
}

/* Leaf values of a finished quantized tree, as the GPU computes them
 * (src/cuda/score.cu): sums over each leaf's rows of the full-precision
 * gradients in 64-bit fixed point (exact whatever the order), or of the
 * quantized values; then the shared leaf rule. Data-parallel: each leaf's sums over
 * this shard's rows, summed over the shards (the integers one process
 * sums), then the same rule on every process. */
static int refit_leaves_q(hb_grow_ws_t *ws, const hb_config_t *cfg, const double *gh, hb_tree_t *tree, int nthreads) {
  const hb_qtree_t *qt = ws->qt;
  /* ldexp(x, e) as x * 2^e: the same double whenever 2^e is one. */
  const int mul = qt->fg >= -1022 && qt->fg <= 1023 && qt->fh >= -1022 && qt->fh <= 1023;
  const double pg = mul ? ldexp(1.0, qt->fg) : 0, ph = mul ? ldexp(1.0, qt->fh) : 0;
  const int L = tree->num_leaves;
  int nth = hb_threads_use(nthreads);
  long long rows_all = 0;
  for (int l = 0; l < L; l++) rows_all += ws->count[l];
  if (rows_all < 65536) nth = 1;
  /* scratch: 2 max(L, nfeat) values, free once the tree is grown: each
   * leaf's g sum at l, its h sum at L + l */
  int64_t *sums = ws->qlg;
  const int by_row = qt->refit && mul && ws->rsum && nth > 1;
  (void)nth;
  if (by_row) {
    refit_sums_by_row(ws, L, gh, pg, ph, nth, sums, sums + L);
  } else {
HB_OMP(parallel for num_threads(nth) schedule(dynamic, 1) if (nth > 1))
    for (int l = 0; l < L; l++) {
      const int *rows = ws->idx + ws->begin[l];
      const int n = ws->count[l];
      long long sg = 0, sh = 0;
      if (qt->refit && mul) {
        for (int i = 0; i < n; i++) {
          size_t r = (size_t)rows[i];
          sg += round_ll(gh[2 * r] * pg);
          sh += round_ll(gh[2 * r + 1] * ph);
        }
      } else if (qt->refit) {
        for (int i = 0; i < n; i++) {
          size_t r = (size_t)rows[i];
          sg += llrint(ldexp(gh[2 * r], qt->fg));
          sh += llrint(ldexp(gh[2 * r + 1], qt->fh));
        }
      } else {
        for (int i = 0; i < n; i++) {
          int32_t p = qt->q[rows[i]];
          sg += hb_qpack_g(p);
          sh += hb_qpack_h(p);
        }
      }
      sums[l] = sg;
      sums[L + l] = sh;
    }
  }
  if (ws->dist) {  /* g sums then h sums: one vector of 2 L */
    const int st = hb_dist_sum_i64(ws->dist, sums, 2 * (int64_t)L);
    if (st != HB_OK) return st;
  }
  for (int l = 0; l < L; l++) {
    const int n = ws->gcount[l];
    double G, H;
    if (qt->refit) {
      G = ldexp((double)sums[l], -qt->fg);
      H = ldexp((double)sums[L + l], -qt->fh);
    } else {
      G = (double)sums[l] * qt->sg;
      H = (double)sums[L + l] * qt->sh;
    }
    double out = hb_rule_leaf_output(G, H, cfg->lambda_l1, ws->leaf_l2[l]);
    if (ws->mono) out = hb_rule_clamp(out, ws->lo[l], ws->hi[l]);  /* the refit keeps the leaf's bounds */
    tree->leaf_value[l] = n > 0 ? cfg->learning_rate * out : 0.0;
    tree->leaf_hess[l] = H;
    tree->leaf_count[l] = n;
  }
  return HB_OK;
}

/* With `remaining` splits left in the tree, only the `remaining` best
 * pending leaves (by gain, ties to the lower index, as the growth loop picks
 * them) can still be split: a leaf's gain never changes and every leaf
 * ranked above it must be split first. Forget the others' splits and give
 * back their histograms. The tree is unchanged; at most about half the
 * leaves hold a histogram at once instead of nearly all of them, which
 * halves the pool's memory. */
static void drop_unreachable(hb_grow_ws_t *ws, int num_leaves, int remaining) {
  int pending = 0;
  for (int k = 0; k < num_leaves; k++) pending += ws->best[k].feature >= 0;
  while (pending > remaining) {
    int w = -1;   /* the worst-ranked pending leaf */
    for (int k = 0; k < num_leaves; k++) {
      if (ws->best[k].feature < 0) continue;
      if (w < 0 || ws->best[k].gain < ws->best[w].gain ||
          (ws->best[k].gain == ws->best[w].gain && k > w)) w = k;
    }
    ws->best[w].feature = -1;
    slot_give(ws, w);
    pending--;
  }
}

/* Under monotone constraints, the unshrunk outputs o[0], o[1] of split sp
 * of leaf l and the children's bounds (the right child is leaf r):
 * hb_rule_bound_children. */
static void bound_children(hb_grow_ws_t *ws, const hb_config_t *cfg, const hb_split_t *sp, int l, int r, double l2,
                           double o[2]) {
  double b[4];
  hb_rule_bound_children(ws->lo[l], ws->hi[l], sp->left_g, sp->left_h, sp->right_g, sp->right_h, cfg->lambda_l1,
                         l2, sp->is_cat ? 0 : ws->mono[sp->feature], b, o);
  ws->lo[l] = b[0]; ws->hi[l] = b[1];
  ws->lo[r] = b[2]; ws->hi[r] = b[3];
}

/* Record split sp of leaf l in the tree (l stays left, the right child is
 * the next leaf), and under monotone constraints the children's bounds. */
static int record_split(hb_grow_ws_t *ws, hb_tree_t *t, const hb_config_t *cfg, const hb_dataset_t *d,
                        const hb_split_t *sp, int l, const int est_n[2]) {
  hb_tree_split_t ts;
  ts.feature = d->feat_col[sp->feature];  /* trees name input columns */
  ts.is_cat = sp->is_cat;
  ts.threshold_bin = sp->threshold_bin;
  ts.default_left = sp->default_left;
  ts.left_bins = sp->left_bins;
  ts.gain = sp->gain;
  const double l2 = hb_rule_child_l2(sp->is_cat, d->mappers[sp->feature].num_bin, cfg->max_cat_to_onehot,
                                     cfg->lambda_l2, cfg->cat_l2);
  ws->leaf_l2[l] = ws->leaf_l2[t->num_leaves] = l2;
  const int r = t->num_leaves;
  if (cfg->max_delta_step > 0 || cfg->path_smooth > 0) {
    /* capped and smoothed towards leaf l's output, with the rows the search
     * counted (LightGBM's), then the monotone bounds */
    double o0 = hb_rule_leaf_output_ext(sp->left_g, sp->left_h, est_n[0], cfg->lambda_l1, l2, cfg->max_delta_step,
                                        cfg->path_smooth, ws->out[l]);
    double o1 = hb_rule_leaf_output_ext(sp->right_g, sp->right_h, est_n[1], cfg->lambda_l1, l2, cfg->max_delta_step,
                                        cfg->path_smooth, ws->out[l]);
    double o[2] = {o0, o1};
    if (ws->mono) {
      double b[4];
      hb_rule_bound_children_given(ws->lo[l], ws->hi[l], o0, o1, sp->is_cat ? 0 : ws->mono[sp->feature], b, o);
      ws->lo[l] = b[0]; ws->hi[l] = b[1];
      ws->lo[r] = b[2]; ws->hi[r] = b[3];
    }
    ws->out[l] = o[0];
    ws->out[r] = o[1];
    ts.value[0] = cfg->learning_rate * o[0];
    ts.value[1] = cfg->learning_rate * o[1];
  } else if (ws->mono) {
    double o[2];
    bound_children(ws, cfg, sp, l, t->num_leaves, l2, o);
    ts.value[0] = cfg->learning_rate * o[0];
    ts.value[1] = cfg->learning_rate * o[1];
  } else {
    ts.value[0] = cfg->learning_rate * hb_rule_leaf_output(sp->left_g, sp->left_h, cfg->lambda_l1, l2);
    ts.value[1] = cfg->learning_rate * hb_rule_leaf_output(sp->right_g, sp->right_h, cfg->lambda_l1, l2);
  }
  if (ws->ngroups > 0) {  /* the children keep the groups that hold the split's column */
    const int c = ts.feature;
    uint64_t *gl = ws->leaf_grp + (size_t)l * ws->gw, *gr = ws->leaf_grp + (size_t)r * ws->gw;
    for (int k = 0; k < ws->ngroups; k++)
      if (!ws->grp_col[(size_t)k * d->ncol + c]) gl[k >> 6] &= ~((uint64_t)1 << (k & 63));
    for (int w = 0; w < ws->gw; w++) gr[w] = gl[w];
  }
  ts.hess[0] = sp->left_h;
  ts.hess[1] = sp->right_h;
  ts.count[0] = sp->left_n;
  ts.count[1] = sp->right_n;
  return hb_tree_split_leaf(t, l, &d->mappers[sp->feature], &ts);
}

/* Rows a take of the tree's start (root_start) copies. */
#define ROOT_BLOCK 32768

/* The start of a tree on the row block: the root's rows (the bag, or every
 * row) into idx, the gradient pairs into the rows (hb_rowblock_set_gh), and
 * the root's sums *G, *H, added row after row in the root's order so that
 * they are the same for any thread count. The sums are a chain of additions
 * no thread can share (two chains of 2M dependent additions a tree at 2M
 * rows, milliseconds): one thread takes them while the others copy the
 * rows, a block at a time, the summing thread joining them when it is done
 * (before, one thread wrote the rows' indices, then added the sums). */
static void root_start(hb_grow_ws_t *ws, const double *gh, const int *bag, int n, int nthreads, double *G,
                       double *H) {
  int nth = hb_threads_use(nthreads);
  const int nrow = ws->nrow;  /* n <= nrow: the bag's rows, or all */
  if (nrow <= 2 * ROOT_BLOCK) nth = 1;
  const int nblk = (nrow + ROOT_BLOCK - 1) / ROOT_BLOCK;
  int *idx = ws->idx;
  hb_rowblock_t *rb = ws->rb;
  double g = 0, h = 0;
  (void)nth;
HB_OMP(parallel num_threads(nth) if (nth > 1))
  {
HB_OMP(single nowait)
    {
      double sg = 0, sh = 0;
      if (bag)
        for (int i = 0; i < n; i++) { size_t r = (size_t)bag[i]; sg += gh[2 * r]; sh += gh[2 * r + 1]; }
      else
        for (int i = 0; i < n; i++) { sg += gh[2 * (size_t)i]; sh += gh[2 * (size_t)i + 1]; }
      g = sg;
      h = sh;
    }
HB_OMP(for schedule(dynamic, 1))
    for (int k = 0; k < nblk; k++) {
      /* the k-th of nblk equal parts of the root's rows and of the data's */
      const int lo = (int)((long long)k * n / nblk), hi = (int)((long long)(k + 1) * n / nblk);
      if (bag) memcpy(idx + lo, bag + lo, sizeof(int) * (size_t)(hi - lo));
      else for (int i = lo; i < hi; i++) idx[i] = i;
      hb_rowblock_set_gh_rows(rb, gh, k * ROOT_BLOCK, nrow - k * ROOT_BLOCK < ROOT_BLOCK ? nrow : (k + 1) * ROOT_BLOCK);
    }
  }
  hb_rowblock_set_gh_src(rb, gh);
  *G = g;
  *H = h;
}

static int grow_tree(hb_grow_ws_t *ws, const hb_config_t *cfg, const hb_dataset_t *d,
                     const double *gh, const hb_qtree_t *qt, const int *bag, int bag_n,
                     const uint8_t *active, hb_tree_t *tree) {
  int nth = cfg->nthreads;
  int n = bag ? bag_n : d->nrow;
  int L = ws->max_leaves;
  int status = HB_OK;
  ws->nfree = 0;
  for (int s = L - 1; s >= 0; s--) ws->free_slots[ws->nfree++] = s;
  for (int l = 0; l < L; l++) { ws->slot[l] = -1; ws->best[l].feature = -1; }

  ws->begin[0] = 0;
  ws->count[0] = n;
  ws->gh = gh;
  ws->qt = qt;
  ws->exact = cfg->exact_sums && !qt;
  if (ws->rb) ws->rb->exact = ws->exact;  /* the histograms' parts may then follow the threads */
  double G = 0, H = 0;
  if (qt) {
    hb_rowblock_set_q(ws->rb, qt->q, nth);
    /* the root's rows and integer sums (exact in any order), in blocks on the threads */
    int64_t qg = 0, qh = 0;
    const int nt = n >= 65536 ? hb_threads_use(nth) : 1;
    (void)nt;
HB_OMP(parallel for num_threads(nt) schedule(static) reduction(+ : qg, qh) if (nt > 1))
    for (int i = 0; i < n; i++) {
      const int r = bag ? bag[i] : i;
      ws->idx[i] = r;
      const int32_t p = qt->q[r];
      qg += hb_qpack_g(p);
      qh += hb_qpack_h(p);
    }
    ws->qg[0] = qg;
    ws->qh[0] = qh;
    G = (double)qg * qt->sg;
    H = (double)qh * qt->sh;
  } else {
    root_start(ws, gh, bag, n, nth, &G, &H);
  }
  if (ws->dist) {  /* every shard's rows and sums (doubles added in rank order) */
    int64_t v[3] = {n, ws->qt ? ws->qg[0] : 0, ws->qt ? ws->qh[0] : 0};
    double gh2[2] = {G, H};
    if ((status = hb_dist_sum_i64(ws->dist, v, 3)) != HB_OK) return status;
    ws->gcount[0] = (int)v[0];
    n = (int)v[0];
    if (qt) {
      ws->qg[0] = v[1];
      ws->qh[0] = v[2];
      G = (double)v[1] * qt->sg;
      H = (double)v[2] * qt->sh;
    } else {
      status = ws->exact ? hb_dist_sum_f64_exact(ws->dist, gh2, 2) : hb_dist_sum_f64(ws->dist, gh2, 2);
      if (status != HB_OK) return status;
      G = gh2[0];
      H = gh2[1];
    }
  }
  ws->sum[0].g = G; ws->sum[0].h = H; ws->sum[0].n = n;

  tree->num_leaves = 1;
  tree->cat_nbits_words = 0;
  /* the root is capped by max_delta_step, never smoothed */
  ws->out[0] = n > 0 ? hb_rule_leaf_output_ext(G, H, n, cfg->lambda_l1, cfg->lambda_l2, cfg->max_delta_step, 0.0, 0.0)
                     : 0.0;
  tree->leaf_value[0] = cfg->learning_rate * ws->out[0];
  if (ws->ngroups > 0)  /* every group is open at the root */
    for (int k = 0; k < ws->ngroups; k++) ws->leaf_grp[k >> 6] |= (uint64_t)1 << (k & 63);
  ws->leaf_l2[0] = cfg->lambda_l2;
  tree->leaf_hess[0] = H;
  tree->leaf_count[0] = n;
  tree->leaf_parent[0] = -1;
  tree->leaf_depth[0] = 0;
  if (ws->mono) { ws->lo[0] = -HUGE_VAL; ws->hi[0] = HUGE_VAL; }
  if (L < 2 || !can_split(cfg, tree, ws, 0)) {
    if (qt) return refit_leaves_q(ws, cfg, gh, tree, nth);
    return HB_OK;
  }

  int s0 = slot_take(ws);
  if (s0 < 0) return s0 == -1 ? hb_error_set(HB_ERR_NOMEM, "out of memory for a leaf histogram") : HB_ERR_STATE;
  ws->slot[0] = s0;
  PROF_START(t_root);
  if ((status = build_leaf_hist(ws, d, 0, s0, active, bag == NULL, nth)) != HB_OK) return status;
  prof_hist_rows(ws, ws->count[0], t_root);
  PROF_START(t_scan0);
  scan_root(ws, cfg, d, active, leaf_mask(ws, cfg, d, active, 0, 0, ws->mask_s), s0, nth);
  status = bests_agree(ws, 0, -1);
  PROF_ADD(PROF_SPLIT, t_scan0);
  if (status != HB_OK) return status;
  if (ws->best[0].feature < 0) slot_give(ws, 0);

  while (tree->num_leaves < L) {
    /* a split takes milliseconds: Ctrl-C is honoured between two (over MPI
     * between trees, where the processes agree on it: learner_cpu.c) */
    if (!ws->dist && (status = hb_interrupt_check()) != HB_OK) break;
    int l = -1;
    double bestg = -INFINITY;
    for (int k = 0; k < tree->num_leaves; k++)
      if (ws->best[k].feature >= 0 && ws->best[k].gain > bestg) { bestg = ws->best[k].gain; l = k; }
    if (l < 0) break;
    hb_split_t sp = ws->best[l];
    int r = tree->num_leaves;
    const int est_n[2] = {sp.left_n, sp.right_n};
    PROF_START(t_part);
    if ((status = partition(ws, d, &sp, l, r, nth)) != HB_OK) break;
    PROF_ADD(PROF_PARTITION, t_part);
    if (ws->prof_on) ws->prof[PROF_SPLITS] += 1;
    if (ws->dist) {
      int64_t c2[2] = {ws->count[l], ws->count[r]};
      if ((status = hb_dist_sum_i64(ws->dist, c2, 2)) != HB_OK) break;
      ws->gcount[l] = (int)c2[0];
      ws->gcount[r] = (int)c2[1];
    }
    sp.left_n = ws->gcount[l];
    sp.right_n = ws->gcount[r];
    status = record_split(ws, tree, cfg, d, &sp, l, est_n);
    /* a categorical split's bitset is allocated: agreed on before the next collective */
    if (sp.is_cat) status = hb_dist_agree(ws->dist, status, "to record a categorical split");
    if (status != HB_OK) break;
    ws->sum[l].g = sp.left_g; ws->sum[l].h = sp.left_h; ws->sum[l].n = sp.left_n;
    ws->sum[r].g = sp.right_g; ws->sum[r].h = sp.right_h; ws->sum[r].n = sp.right_n;
    if (qt) {
      ws->qg[r] = ws->qg[l] - ws->qlg[l];
      ws->qh[r] = ws->qh[l] - ws->qlh[l];
      ws->qg[l] = ws->qlg[l];
      ws->qh[l] = ws->qlh[l];
    }
    ws->best[l].feature = -1;
    ws->best[r].feature = -1;
    ws->slot[r] = -1;
    if (tree->num_leaves >= L) break;

    int cl = can_split(cfg, tree, ws, l), cr = can_split(cfg, tree, ws, r);
    if (!cl && !cr) { slot_give(ws, l); continue; }
    int small = ws->gcount[l] <= ws->gcount[r] ? l : r;
    int large = small == l ? r : l;
    int parent_slot = ws->slot[l];
    ws->slot[l] = -1;
    int ss = slot_take(ws);
    if (ss < 0) { status = ss == -1 ? HB_ERR_NOMEM : HB_ERR_STATE; ws->free_slots[ws->nfree++] = parent_slot; break; }
    ws->slot[small] = ss;
    const int large_ok = can_split(cfg, tree, ws, large);
    /* node ids of the two children for per-node draws: 2r - 1 (left), 2r (right) */
    const uint64_t us = small == l ? 2 * (uint64_t)r - 1 : 2 * (uint64_t)r, ub = small == l ? 2 * (uint64_t)r : 2 * (uint64_t)r - 1;
    const uint8_t *ms = leaf_mask(ws, cfg, d, active, small, us, ws->mask_s);
    const uint8_t *mb = leaf_mask(ws, cfg, d, active, large, ub, ws->mask_b);
    if (ms == active) ms = NULL;
    if (mb == active) mb = NULL;
    scan_job_t sj;
    scan_prepare(&sj, ws, cfg, d, active, small, small == l ? cl : cr, large, large_ok ? parent_slot : -1, large_ok,
                 ms, mb, us, ub);
    PROF_START(t_hist);
    int scanned = 0;
    if (!ws->dist) {
      /* one parallel region builds the smaller child's histogram, then
       * subtracts and scans (when the histogram takes the threads) */
      const int *rows = ws->idx + ws->begin[small], nr = ws->count[small];
      sj.t_start = ws->prof_on ? -1.0 : 0.0;
      scanned = qt ? hb_qhist_build_then(d, ws->rb, rows, nr, qt->q, qt->rows16, ws->qg[small], ws->qh[small], active,
                                         (hb_qbin_t *)ws->pool[ss], nth, scan_team, &sj)
                   : hb_hist_build_then(d, ws->rb, rows, nr, gh, ws->sum[small].g, ws->sum[small].h, active,
                                        ws->pool[ss], nth, scan_team, &sj);
    } else if ((status = build_leaf_hist(ws, d, small, ss, active, 0, nth)) != HB_OK) {
      ws->free_slots[ws->nfree++] = parent_slot;
      break;
    }
    const double t_scan = scanned ? sj.t_start : (ws->prof_on ? hb_threads_wtime() : 0.0);
    prof_hist_span(ws, ws->count[small], t_hist, t_scan);
    if (large_ok) {
      ws->slot[large] = parent_slot;
    } else {
      ws->free_slots[ws->nfree++] = parent_slot;
    }
    status = scanned ? scan_finish(ws, &sj) : subtract_and_scan(ws, d, &sj, nth);
    PROF_ADD(PROF_SPLIT, t_scan);
    if (status != HB_OK) break;
    if (ws->best[small].feature < 0) slot_give(ws, small);
    if (large_ok && ws->best[large].feature < 0) slot_give(ws, large);
    drop_unreachable(ws, tree->num_leaves, L - tree->num_leaves);
  }
  if (status == HB_ERR_NOMEM) hb_error_set(status, "out of memory for a leaf histogram");
  if (status == HB_OK && qt) status = refit_leaves_q(ws, cfg, gh, tree, nth);
  return status;
}

int hb_grow_tree(hb_grow_ws_t *ws, const hb_config_t *cfg, const hb_dataset_t *d,
                 const double *gh, const hb_qtree_t *qt, const int *bag, int bag_n,
                 const uint8_t *active, hb_tree_t *tree) {
  PROF_START(t_tree);
  const int status = grow_tree(ws, cfg, d, gh, qt, bag, bag_n, active, tree);
  PROF_ADD(PROF_TREE, t_tree);
  return status;
}
