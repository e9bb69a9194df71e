/* compare_ref.c - this tree's CPU reference (flamia_ref_*) against an earlier one linked as
 * old_ref_* (dev/ref/bitcheck.sh builds it): every preset, bit for bit, outputs and stats. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>
#include "flamia.h"
flamia_status old_ref_forward(const flamia_recipe *r, const flamia_shape *s, const float *q, const float *k, const float *v, float *o, float *lse);
flamia_status old_ref_backward_ex(const flamia_recipe *r, const flamia_shape *s, const float *q, const float *k, const float *v, const float *o, const float *lse, const float *dout, float *dq, float *dk, float *dv, flamia_ref_stats *st);
static float rn(void){ double u=(rand()+1.0)/(RAND_MAX+2.0), v=rand()/(double)RAND_MAX; return (float)(sqrt(-2*log(u))*cos(6.2831853*v)); }
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
int main(void){
  const char *const *names = flamia_recipe_preset_names(); int fails=0; double told=0,tnew=0;
  for(int c=0;c<6;c++){
    int lens[6]={1,77,33,300,64,129}; int nd=6, Hq=c<3?4:6, Hkv=c<3?2:3, D=c%2?64:128, causal=c!=1;
    int cu[7]={0}; for(int i=0;i<nd;i++) cu[i+1]=cu[i]+lens[i]; int T=cu[nd];
    flamia_shape s={T,nd,cu,Hq,Hkv,D,causal,0.0f,0, NULL};
    size_t nq=(size_t)T*Hq*D, nk=(size_t)T*Hkv*D;
    float *q=malloc(nq*4),*k=malloc(nk*4),*v=malloc(nk*4),*g=malloc(nq*4);
    for(size_t i=0;i<nq;i++){q[i]=rn()*(c==4?30:2);g[i]=rn();} for(size_t i=0;i<nk;i++){k[i]=rn()*(i%128<3?20:1);v[i]=rn();}
    float *o[2],*l[2],*a[2],*b[2],*cc[2]; flamia_ref_stats st[2];
    for(int z=0;z<2;z++){o[z]=malloc(nq*4);l[z]=malloc(T*Hq*4);a[z]=malloc(nq*4);b[z]=malloc(nk*4);cc[z]=malloc(nk*4);}
    for(const char *const *n=names;*n;n++){
      flamia_recipe r; flamia_recipe_preset(*n,&r); if(c==5) r.hadamard=1;
      double t0=now();
      int e1=old_ref_forward(&r,&s,q,k,v,o[0],l[0])||old_ref_backward_ex(&r,&s,q,k,v,o[0],l[0],g,a[0],b[0],cc[0],&st[0]);
      double t1=now();
      int e2=flamia_ref_forward(&r,&s,q,k,v,o[1],l[1])||flamia_ref_backward_ex(&r,&s,q,k,v,o[1],l[1],g,a[1],b[1],cc[1],&st[1]);
      double t2=now(); told+=t1-t0; tnew+=t2-t1;
      int ok=!e1&&!e2&&!memcmp(o[0],o[1],nq*4)&&!memcmp(l[0],l[1],T*Hq*4)&&!memcmp(a[0],a[1],nq*4)&&!memcmp(b[0],b[1],nk*4)&&!memcmp(cc[0],cc[1],nk*4)&&!memcmp(&st[0],&st[1],sizeof st[0]);
      if(!ok){printf("case %d %s: DIFFER (e %d %d)\n",c,*n,e1,e2);fails++;}
    }
    printf("case %d (Hq %d Hkv %d D %d causal %d%s): %s\n",c,Hq,Hkv,D,causal,c==5?" hadamard":"",fails?"see above":"all recipes bit-identical (outputs and stats)");
  }
  printf("time old %.2f s new %.2f s\n",told,tnew);
  return fails;
}
