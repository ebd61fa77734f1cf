/* select.h: order statistics without sorting. */
#ifndef HB_SELECT_H
#define HB_SELECT_H
#include <stddef.h>

/* The k-th smallest (k in 0..n-1) of the n doubles v[0], v[stride],
 * v[2 stride], ...; they are reordered so that those after position k are
 * not smaller. Hoare selection with a median-of-three pivot: expected
 * linear time. Only the doubles move (a stride over pairs leaves the pairs'
 * other halves where they were). */
double hb_select_kth(double *v, size_t stride, int n, int k);

#endif
