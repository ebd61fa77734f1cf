/* refit.c: leaf values re-estimated on new data, the trees kept (refit.h). */
#include <math.h>
#include <string.h>
#include "refit.h"
#include "error.h"
#include "interrupt.h"
#include "objective.h"
#include "objective_rules.h"
#include "split_rules.h"

/* The extra L2 of the leaves a categorical split of feature f makes, as
 * training chose it (hb_rule_child_l2), with the feature's bins taken as its
 * levels plus the missing bin (training may have kept fewer levels). */
static double child_l2(const hb_model_t *m, const hb_tree_t *t, int node, const hb_refit_params_t *p) {
  if (node < 0 || !(t->decision[node] & HB_DECISION_CATEGORICAL)) return p->lambda_l2;
  const int f = t->split_feature[node];
  return hb_rule_child_l2(1, m->schema.nlevels[f] + 1, m->config.max_cat_to_onehot, p->lambda_l2, p->cat_l2);
}

/* The error when `what` went out of range in iteration `it` (1-based):
 * the input to blame, as training names it, else the refit itself. */
static int refit_overflow(const hb_model_t *m, int n, const double *label, const double *weight,
                          const double *offset, const char *what, int it) {
  const hb_overflow_inputs_t in = {n, label, weight, offset, offset ? m->trees_per_iter : 0, m->init_score,
                                   m->trees_per_iter};
  int st = hb_objective_overflow_cause(&m->config, &in, what, "", "iteration", it);
  if (st != HB_OK) return st;
  return hb_error_set(HB_ERR_INPUT,
                      "iteration %d: the refitted model's %s went out of range on these rows (the scores grew "
                      "without bound%s); give a `decay_rate` nearer 1, or a larger `lambda_l2`",
                      it, what, HB_OBJ_LOG_LINK(m->config.objective) ? ", and the response is exp(score)" : "");
}

int hb_refit_model(hb_model_t *m, int n, const int *leaf, const double *label, const double *weight,
                   const double *offset, const hb_refit_params_t *p) {
  const hb_config_t *cfg = &m->config;
  if (cfg->objective == HB_OBJ_LAMBDARANK || cfg->objective == HB_OBJ_CUSTOM)
    return hb_error_set(HB_ERR_INPUT, "a %s model cannot be refitted: its gradients need %s",
                        cfg->objective == HB_OBJ_LAMBDARANK ? "lambdarank" : "custom-objective",
                        cfg->objective == HB_OBJ_LAMBDARANK ? "the queries" : "the objective function");
  if (n < 1) return hb_error_set(HB_ERR_INPUT, "no rows to refit on");
  if (!(p->decay_rate >= 0 && p->decay_rate <= 1))
    return hb_error_set(HB_ERR_INPUT, "decay_rate must be in [0, 1] (got %g)", p->decay_rate);
  int st = hb_objective_check_labels(cfg, n, label);
  if (st != HB_OK) return st;
  const int K = m->trees_per_iter, T = m->num_trees, niter = hb_model_num_iterations(m);
  const size_t N = (size_t)n;
  int most = 1;
  for (int t = 0; t < T; t++)
    if (m->trees[t]->num_leaves > most) most = m->trees[t]->num_leaves;
  for (size_t e = 0; e < N * (size_t)T; e++)
    if (leaf[e] < 0 || leaf[e] >= m->trees[e / N]->num_leaves)
      return hb_error_set(HB_ERR_INPUT, "row %zu has leaf %d in tree %zu, which has %d leaves", e % N + 1, leaf[e],
                          e / N + 1, m->trees[e / N]->num_leaves);
  const int renew = HB_OBJ_RENEWS(cfg->objective);
  double *score = hb_malloc(sizeof(double) * N * (size_t)K);
  double *gh = hb_malloc(sizeof(double) * 2 * N * (size_t)K);
  /* per leaf G, H and count; per internal node its parent, G, H and count */
  double *G = hb_malloc(sizeof(double) * 4 * (size_t)most), *H = G ? G + most : NULL;
  int *cnt = hb_malloc(sizeof(int) * 3 * (size_t)most), *up = cnt ? cnt + most : NULL;
  int *order = renew ? hb_malloc(sizeof(int) * N) : NULL, *begin = renew ? hb_malloc(sizeof(int) * ((size_t)most + 1)) : NULL;
  hb_objective_vw_t *vw = renew ? hb_malloc(sizeof *vw * N) : NULL;
  int *cox_order = NULL;  /* Cox: the rows in time order, for the risk sets (as training) */
  if (!score || !gh || !G || !cnt || (renew && (!order || !begin || !vw)) ||
      (cfg->objective == HB_OBJ_COX && hb_objective_cox_order(n, label, &cox_order) != HB_OK)) {
    st = hb_error_set(HB_ERR_NOMEM, "out of memory refitting the trees");
    goto done;
  }
  for (int k = 0; k < K; k++)
    for (size_t i = 0; i < N; i++)
      score[(size_t)k * N + i] = (m->init_score ? m->init_score[k] : 0.0) + (offset ? offset[(size_t)k * N + i] : 0.0);
  const double lr = cfg->rf ? 1.0 : cfg->learning_rate, decay = p->decay_rate;  /* a forest is unshrunk */
  for (int it = 0; it < niter && st == HB_OK; it++) {
    if (cfg->objective == HB_OBJ_COX)
      hb_objective_cox_gradients(n, label, weight, cox_order, score, gh);
    else
      hb_objective_gradients(cfg, n, label, weight, score, gh, p->nthreads);
    if (!hb_objective_gradients_in_range(gh, n, K, (double)n, p->nthreads)) {
      st = refit_overflow(m, n, label, weight, offset, "gradients", it + 1);
      break;
    }
    for (int k = 0; k < K; k++) {
      hb_tree_t *t = m->trees[it * K + k];
      const int *lf = leaf + (size_t)(it * K + k) * N;
      const double *g = gh + 2 * (size_t)k * N;
      const int L = t->num_leaves;
      for (int l = 0; l < L; l++) {
        G[l] = H[l] = 0;
        cnt[l] = 0;
      }
      for (size_t i = 0; i < N; i++) {
        G[lf[i]] += g[2 * i];
        H[lf[i]] += g[2 * i + 1];
        cnt[lf[i]]++;
      }
      if (renew) {  /* rows grouped by leaf, for the quantiles of their residuals */
        begin[0] = 0;
        for (int l = 0; l < L; l++) begin[l + 1] = begin[l] + cnt[l];
        for (size_t i = 0; i < N; i++) order[begin[lf[i]]++] = (int)i;
        for (int l = L; l > 0; l--) begin[l] = begin[l - 1];
        begin[0] = 0;
      }
      for (int l = 0; l < L; l++) {
        double out = 0;
        if (cnt[l] > 0 && renew) {
          /* as training renews them: l1 and mape at the median (mape's rows weighed by
           * 1 / max(1, |y|)), quantile at quantile_alpha */
          const double a = cfg->objective == HB_OBJ_QUANTILE ? cfg->quantile_alpha : 0.5;
          for (int r = begin[l]; r < begin[l + 1]; r++) {
            const int i = order[r];
            vw[r - begin[l]].v = label[i] - score[(size_t)k * N + (size_t)i];
            vw[r - begin[l]].w = (weight ? weight[i] : 1.0) *
                                 (cfg->objective == HB_OBJ_MAPE ? hb_objective_mape_weight(label[i]) : 1.0);
          }
          out = lr * hb_objective_quantile(vw, cnt[l], a);
        } else if (cnt[l] > 0) {
          out = lr * hb_rule_leaf_output(G[l], H[l], p->lambda_l1, child_l2(m, t, t->leaf_parent[l], p));
        }
        /* a tree that could not split adds nothing where its root breaks the limits, as in training */
        if (L == 1 && !hb_rule_lone_root_counts(cnt[0], H[0], cfg->min_data_in_leaf, cfg->min_sum_hessian_in_leaf))
          out = 0;
        t->leaf_value[l] = decay * t->leaf_value[l] + (1 - decay) * out;
        if (!isfinite(t->leaf_value[l]) && st == HB_OK) st = refit_overflow(m, n, label, weight, offset, "leaf values", it + 1);
        t->leaf_hess[l] = H[l];
        t->leaf_count[l] = cnt[l];
      }
      /* internal nodes: the sums of the leaves below them, and the l2 of
       * the split above them, as when training made them leaves */
      if (L > 1) {
        const int ni = L - 1;
        double *NG = H + most, *NH = NG + most;
        int *NC = up + most;
        up[0] = -1;
        for (int j = 0; j < ni; j++) {
          if (t->left[j] >= 0) up[t->left[j]] = j;
          if (t->right[j] >= 0) up[t->right[j]] = j;
          NG[j] = NH[j] = 0;
          NC[j] = 0;
        }
        for (int l = 0; l < L; l++)
          for (int a = t->leaf_parent[l]; a >= 0; a = up[a]) {
            NG[a] += G[l];
            NH[a] += H[l];
            NC[a] += cnt[l];
          }
        for (int j = 0; j < ni; j++) {
          const double out =
              NC[j] > 0 ? lr * hb_rule_leaf_output(NG[j], NH[j], p->lambda_l1, child_l2(m, t, up[j], p)) : 0.0;
          t->internal_value[j] = decay * t->internal_value[j] + (1 - decay) * out;
          t->internal_hess[j] = NH[j];
          t->internal_count[j] = NC[j];
        }
      }
    }
    if (st != HB_OK) break;
    if (!cfg->rf) {  /* a forest's trees all fit the gradients at the starting score */
      int bad = 0;
      const double top = HB_OBJ_LOG_LINK(cfg->objective) ? HB_LOG_LINK_MAX : INFINITY;
      for (int k = 0; k < K; k++) {
        const hb_tree_t *t = m->trees[it * K + k];
        const int *lf = leaf + (size_t)(it * K + k) * N;
        for (size_t i = 0; i < N; i++) {
          double *sc = &score[(size_t)k * N + i];
          *sc += t->leaf_value[lf[i]];
          bad |= !isfinite(*sc) || *sc > top;  /* (a log link's response is exp(score)) */
        }
      }
      if (bad) {
        st = refit_overflow(m, n, label, weight, offset, "scores", it + 1);
        break;
      }
    }
    if (it + 1 < niter) st = hb_interrupt_check();
  }
done:
  hb_free(cox_order);
  hb_free(score);
  hb_free(gh);
  hb_free(G);
  hb_free(cnt);
  hb_free(order);
  hb_free(begin);
  hb_free(vw);
  return st;
}
