/* SPDX-License-Identifier: MIT */
/*
** group-fill-sim.c - scratch: keys placed two-choice (A while it has a
** free slot, else B, no kicks) into groups of 16, 7 and 12 slots; prints
** the mean load at the first key whose two groups are both full (200
** trials each). gcc -O2 group-fill-sim.c && ./a.out
*/
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
static uint64_t s=88172645463325252ull; static uint64_t rnd(void){s^=s<<13;s^=s>>7;s^=s<<17;return s;}
int main(void){
  int sizes[]={16,7,12};
  for(int si=0;si<3;si++){int B=sizes[si];
   for(int ng=64; ng<=4096; ng*=4){
    double sumload=0; int trials=200;
    for(int t=0;t<trials;t++){
      int *c=calloc(ng,sizeof(int)); long n=0;
      for(;;){uint64_t r=rnd(); int a=(r>>32)%ng, b=(uint32_t)r%ng;
        if(c[a]<B)c[a]++; else if(c[b]<B)c[b]++; else break; n++;}
      sumload+=(double)n/(ng*B); free(c);}
    printf("group %2d ngroups %5d: first failure at load %.3f\n",B,ng,sumload/trials);}}
}
