/* select.c: order statistics without sorting (select.h). */
#include "select.h"

double hb_select_kth(double *v, size_t stride, int n, int k) {
#define AT(i) v[(size_t)(i) * stride]
  int lo = 0, hi = n - 1;
  while (lo < hi) {
    const double a = AT(lo), b = AT(lo + (hi - lo) / 2), c = AT(hi);
    const double piv = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
    int i = lo, j = hi;
    while (i <= j) {
      while (AT(i) < piv) i++;
      while (AT(j) > piv) j--;
      if (i <= j) {
        const double t = AT(i);
        AT(i) = AT(j);
        AT(j) = t;
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return AT(k);
  }
  return AT(k);
#undef AT
}
