/* compare_ref64.c - this tree's FP64 ground truth against an earlier one linked as old_ref64_*
 * (dev/ref/bitcheck.sh builds it): O, lse, dQ, dK, dV bit for bit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "flamia.h"
flamia_status old_ref64_forward(const flamia_shape *s, const float *q, const float *k, const float *v, double *o, double *lse);
flamia_status old_ref64_backward(const flamia_shape *s, const float *q, const float *k, const float *v, const float *dout, double *dq, double *dk, double *dv);
static float rnd(void){ return (float)(rand()/(double)RAND_MAX*2-1); }
int main(void){
  int cases[][8]={{5,1,77,33,40,2,0,0},{3,300,1,64,0,0,0,0}};
  int fails=0;
  for(int c=0;c<4;c++){
    int lens[5]={1,77,33,130,64}; int nd=5, Hq=c<2?4:6, Hkv=c<2?2:3, D=c%2?64:128, causal=c!=1;
    int cu[6]={0}; for(int i=0;i<nd;i++) cu[i+1]=cu[i]+lens[i]; int T=cu[nd];
    flamia_shape s={T,nd,cu,Hq,Hkv,D,causal,0.0f,0, NULL};
    size_t nq=(size_t)T*Hq*D, nk=(size_t)T*Hkv*D;
    float *q=malloc(nq*4),*k=malloc(nk*4),*v=malloc(nk*4),*dout=malloc(nq*4);
    for(size_t i=0;i<nq;i++){q[i]=rnd()*3;dout[i]=rnd();} for(size_t i=0;i<nk;i++){k[i]=rnd();v[i]=rnd();}
    double *o1=malloc(nq*8),*o2=malloc(nq*8),*l1=malloc(T*Hq*8),*l2=malloc(T*Hq*8);
    double *a1=malloc(nq*8),*a2=malloc(nq*8),*b1=malloc(nk*8),*b2=malloc(nk*8),*c1=malloc(nk*8),*c2=malloc(nk*8);
    if(old_ref64_forward(&s,q,k,v,o1,l1)||flamia_ref64_forward(&s,q,k,v,o2,l2)) {puts("fwd err");return 1;}
    if(old_ref64_backward(&s,q,k,v,dout,a1,b1,c1)||flamia_ref64_backward(&s,q,k,v,dout,a2,b2,c2)) {puts("bwd err");return 1;}
    int ok=!memcmp(o1,o2,nq*8)&&!memcmp(l1,l2,T*Hq*8)&&!memcmp(a1,a2,nq*8)&&!memcmp(b1,b2,nk*8)&&!memcmp(c1,c2,nk*8);
    printf("case %d (Hq %d Hkv %d D %d causal %d): %s\n",c,Hq,Hkv,D,causal,ok?"bit-identical":"DIFFER"); fails+=!ok;
  }
  return fails;
}
