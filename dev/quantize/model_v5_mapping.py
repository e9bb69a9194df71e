# model_v5_mapping.py - a Python model of v5_occ512.patch's index logic (no GPU): for random packed
# layouts, d 64/128, 512 threads with / without group mode and 256 threads, several head slots
# per CTA, it checks that every (slot, token, 16-byte column) is held by exactly one thread in
# the right iteration (speculative loads kept only when valid, prefetch across slots) and that
# the V^T word/byte stores write every (head, dim, token) exactly once. It models the source's
# formulas, not the compiled code: the device harness remains the check. python3 ...  (~30 s)
# Python model of v5's mapping (group / wide mode, speculation keep, V^T tile words)
import random
def sim(cu, T, D, NT, groups, hpc, slots_total):
    TPR=D//8; RP=NT//TPR; NP=max(64//RP,1); RPW=32//TPR
    kG = groups and NT==512
    UT = 256 if kG else NT; rpu=UT//TPR
    # block starts
    starts=set()
    for i in range(len(cu)-1):
        for s in range(cu[i],cu[i+1],32): starts.add(s)
    W=(T+31)//32
    covered={}  # (slot, token) -> count
    vt={}       # (slot, d, token) -> written
    for w in range(W):
        w0=32*w
        a=next((t for t in range(w0,min(w0+32,T)) if t in starts), T)
        b=next((t for t in range(w0+32,min(w0+64,T)) if t in starts), T)
        n=b-a; off=a-w0
        assert 0<=n<=63 and b-w0<=64
        for by in range((slots_total+hpc-1)//hpc):
            slot0=by*hpc; slot1=min(slot0+hpc,slots_total)
            grp = kG and n<=32
            gm=1 if grp else 0
            for tid in range(NT):
                c=tid%TPR
                # speculation
                sg = tid>>8 if kG else 0
                sr0=((tid&255) if kG else tid)//TPR; srp= RP//2 if kG else RP
                spec={}
                for q in range(NP):
                    r=sr0+q*srp
                    if slot0+sg<slot1 and r<32 and w0+r<T: spec[q]=(slot0+sg,w0+r)
                    else: spec[q]=None
                half=tid>>8 if kG else 0; ut=(tid&255) if kG else tid
                roff=(half&(gm^1))*32; g=half&gm; sstep=1+gm
                r0=roff+ut//TPR; wrow0=r0&~(RPW-1)
                assert wrow0 == roff+(ut//32)*RPW
                raw={}
                if slot0+g<slot1:
                    keep = a==w0 and (grp or half==0)
                    for q in range(NP):
                        r=r0+q*rpu
                        if r>=n: raw[q]=None
                        elif (not keep) or r>=32: raw[q]=(slot0+g,a+r)
                        else: raw[q]=spec[q]
                slot=slot0+g
                while slot<slot1:
                    for q in range(NP):
                        r=r0+q*rpu
                        if r<n:
                            assert raw[q]==(slot,a+r), (w,slot,tid,q,raw[q],a+r,grp)
                            covered[(slot,a+r,c)]=covered.get((slot,a+r,c),0)+1
                    # prefetch
                    nxt=slot+sstep
                    if nxt<slot1:
                        for q in range(NP):
                            r=r0+q*rpu
                            raw[q]=(nxt,a+r) if r<n else None
                    slot=nxt
            # V^T store simulation for each slot (tile per unit); check words
            unit = NT>>gm
            for slot in range(slot0,slot1):
                for tt in range(unit):
                    l=tt&15; lo_t=4*l-off; hi_t=lo_t+4
                    if hi_t>0 and lo_t<n:
                        for d in range((tt&(unit-1))>>4, D, unit//16):
                            # tile byte of (d,col): d*64 + ((col>>2)^(d>>3 &15))*4 + (col&3); read word l^(d>>3&15)
                            for k in range(4):
                                if lo_t+k>=0 and lo_t+k<n:
                                    col=4*l+k  # token w0+col
                                    vt[(slot,d,w0+col)]=vt.get((slot,d,w0+col),0)+1
    # every (slot, token, c) exactly once
    for s in range(slots_total):
        for t in range(T):
            for c in range(D//8):
                assert covered.get((s,t,c),0)==1, (s,t,c,covered.get((s,t,c)))
            for d in range(D):
                assert vt.get((s,d,t),0)==1, ('vt',s,d,t)
    assert len(covered)==slots_total*T*(D//8)
random.seed(1)
for trial in range(4):
    lens=[]
    T=0
    while T<700:
        l=random.choice([1,1,2,3,31,32,33,63,64,65,100,127,128,129,random.randint(1,300)])
        lens.append(l); T+=l
    cu=[0]
    for l in lens: cu.append(cu[-1]+l)
    T=cu[-1]
    for D in (64,128):
        for NT,groups in ((512,True),(512,False),(256,False)):
            for hpc in (1,3,4):
                sim(cu,T,D,NT,groups,hpc,6)
    print('trial',trial,'ok T=',T)
# aligned pack
cu=[0,512,1024]; 
for D in (64,128):
    for hpc in (1,2,5): sim(cu,1024,D,512,True,hpc,6)
print('aligned ok')
