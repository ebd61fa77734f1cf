/* boost.h: the booster: configuration, the model being grown and the
 * per-round training state (scores, gradients, bagging). One call of
 * hb_booster_update() is one boosting round (num_class trees), so the R loop
 * can honour interrupts and evaluate between rounds. */
#ifndef HB_BOOST_H
#define HB_BOOST_H
#include "config.h"
#include "dataset.h"
#include "model.h"

typedef struct hb_booster hb_booster_t;

/* Create a booster for `train` (borrowed: it must outlive the booster; it
 * must carry labels). `schema` is copied into the model. */
int hb_booster_create(const hb_config_t *cfg, const hb_dataset_t *train,
                      const hb_schema_t *schema, hb_booster_t **out);
void hb_booster_free(hb_booster_t *b);

/* Add a validation set binned with the training mappers (borrowed); its
 * scores are kept up to date every round. Returns HB_OK or an error. */
int hb_booster_add_valid(hb_booster_t *b, const hb_dataset_t *valid);

/* One round. *finished is set to 1 when no tree could split (every tree of
 * the round is a single leaf), as LightGBM stops then. An interrupt
 * (interrupt.h, checked between trees and between splits) returns
 * HB_ERR_INTERRUPT: caught before the round's first tree has changed the
 * scores, the round is undone and the booster trains on as if it had not
 * been called; later, the booster is left broken and every further call
 * (update, eval, scores) fails with HB_ERR_STATE. The model grown so far
 * (hb_booster_model) holds whole rounds either way. */
int hb_booster_update(hb_booster_t *b, int *finished);
/* A custom objective's gradients for the next round, g and h of the n
 * training rows at the current scores (hb_booster_scores): copied; finite,
 * h >= 0, else HB_ERR_INPUT. Each round of a custom objective needs them. */
int hb_booster_set_gradients(hb_booster_t *b, const double *g, const double *h);

/* DART: the iterations (0-based, increasing; *iters borrowed until the
 * next round) the last round dropped; returns how many (0 without DART). */
int hb_booster_dart_dropped(const hb_booster_t *b, const int **iters);

/* Interaction constraints for the CPU learner (grow.h:
 * hb_grow_ws_set_interactions), before the first round. */
int hb_booster_set_interactions(hb_booster_t *b, int ngroups, const int *begin, const int *cols);

/* Metric on the training set (data = 0) or validation set data = 1, 2, ...,
 * with the metric's cut-off k (ndcg@k, map@k; other metrics ignore it). */
int hb_booster_eval_at(hb_booster_t *b, int data, int metric, int k, double *out);

/* The queries of data set `data` (0 train, 1.. valid) for ranking: qid[i]
 * in 0..nq-1 is row i's query, n the set's rows (copied into an index; a previous one is
 * replaced). Lambdarank needs the training set's before the first round,
 * ndcg or map a set's before it is evaluated. HB_OK, HB_ERR_INPUT or HB_ERR_NOMEM. */
int hb_booster_set_query(hb_booster_t *b, int data, int n, int nq, const int *qid);

/* Raw scores of dataset `data` (0 train, 1.. valid): nrow x num_class
 * column-major, borrowed (NULL when a GPU copy fails). */
const double *hb_booster_scores(hb_booster_t *b, int data, int *nrow);

/* 1 when the booster trains on the GPU. */
int hb_booster_on_gpu(const hb_booster_t *b);
/* Profiling on or off; hb_booster_get_profile fills out[HB_PROFILE_N] and
 * returns 1 (0: the learner keeps no profile). On the GPU: round ms,
 * partition ms, histogram ms, split-search ms, histogram bytes read,
 * splits, rounds, device bytes the learner took, the GPU's peak used bytes,
 * its total bytes (cuda.h's hb_cuda_profile_t). On the CPU: round ms,
 * partition ms, histogram ms, split-search ms, tree ms (hb_grow_tree, whole),
 * splits, rounds (summed over the class workers when several class trees
 * grow at once), those workers (1: one tree at a time; learner_cpu.c), then
 * zeros (grow.h's phase timers) up to out[10], then
 * from out[10] grow.h's histogram ms by the leaf's rows and their counts
 * (zeros on the GPU). */
#define HB_PROFILE_N 24
void hb_booster_profile(hb_booster_t *b, int on);
int hb_booster_get_profile(const hb_booster_t *b, double out[HB_PROFILE_N]);

/* The model grown so far (borrowed; still owned by the booster). */
hb_model_t *hb_booster_model(hb_booster_t *b);
/* Detach the model: the caller owns it and the booster may only be freed. */
hb_model_t *hb_booster_release_model(hb_booster_t *b);

#endif
