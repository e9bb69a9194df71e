# Sixty-sixth session: a list-scheduling model of the backward main kernel's chunks (one CTA an SM, 132 SMs; a
# CTA's time = c0 + its query tiles x group): the makespan over the ideal, grid order against longest first.
import heapq
def makespan(durs, sms=132):
    h=[0.0]*sms; heapq.heapify(h)
    for d in durs:
        t=heapq.heappop(h); heapq.heappush(h,t+d)
    return max(h)
def grid(ndocs, L, heads, c0, group):
    nt=L//128; items=[]
    for d in range(ndocs):
        for t in range(nt):
            for h in range(heads):
                items.append(c0+(nt-t)*group)
    return items
for c0 in (1.0,3.0):
  print("c0 =",c0)
  for name,nd,L,hk,chunks,g in [("16x4096",16,4096,16,6,1),("16x4096",16,4096,16,4,1),("16x4096",16,4096,16,1,1),("8x4096",8,4096,16,4,1),("4x4096",4,4096,16,6,1),("4x4096",4,4096,16,4,1),("4x4096",4,4096,16,1,1),("gqa-16x1024",16,1024,4,2,4),("gqa-16x1024",16,1024,4,1,4),("16x1024",16,1024,16,2,1),("64x1024",64,1024,16,2,1)]:
    tg=tl=ideal=0
    for c in range(chunks):
        h0=c*hk//chunks; h1=(c+1)*hk//chunks
        it=grid(nd,L,h1-h0,c0,g)
        tg+=makespan(it); tl+=makespan(sorted(it,reverse=True)); ideal+=sum(it)/132
    print("  %-12s chunks %d: grid %.3f  LPT %.3f  CTAs/SM per chunk %.1f"%(name,chunks,tg/ideal,tl/ideal,nd*L/128*(hk//chunks)/132))
