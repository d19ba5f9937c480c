import torch, time
torch.set_num_threads(2)
B,T,D,H,F=8,128,768,12,3072
g=torch.Generator().manual_seed(0)
x=torch.randn(B,T,D); wqkv=torch.randn(D,3*D)*0.03; bqkv=torch.randn(3*D)*0.01
wo=torch.randn(D,D)*0.03; bo=torch.randn(D)*0.01; g1=torch.ones(D); be1=torch.zeros(D)
w1=torch.randn(D,F)*0.03; b1=torch.randn(F)*0.01; w2=torch.randn(F,D)*0.03; b2=torch.randn(D)*0.01; g2=torch.ones(D); be2=torch.zeros(D)
def block(x):
    qkv=x@wqkv+bqkv
    r=qkv.view(B,T,3,H,64)
    q,k,v=r[:,:,0].permute(0,2,1,3),r[:,:,1].permute(0,2,1,3),r[:,:,2].permute(0,2,1,3)
    s=(q@k.transpose(-1,-2))*0.125
    p=torch.softmax(s,-1)
    o=(p@v).permute(0,2,1,3).reshape(B,T,D)
    h=x+o@wo+bo
    y=torch.nn.functional.layer_norm(h,(D,),g1,be1,1e-12)
    u=y@w1+b1
    gl=torch.nn.functional.gelu(u,approximate='tanh')
    z=y+gl@w2+b2
    return torch.nn.functional.layer_norm(z,(D,),g2,be2,1e-12)
with torch.no_grad():
    for _ in range(2): block(x)
    ts=[]
    for _ in range(10):
        t=time.perf_counter(); block(x); ts.append(time.perf_counter()-t)
ts.sort(); print("torch median %.1f ms min %.1f"%(ts[5]*1e3, ts[0]*1e3))
