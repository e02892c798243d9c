# all_ops.s: one valid instance of every opcode (tests/test_isa.c assembles it, disassembles
# it and assembles the text again: the bytes must be identical).
.constbase 0x1000
.const w i8 [1, -2, 3, -4, 5, -6, 7, -8, 9]
.const rq i32 [1518500250, 38]
.const big i16 [-32768, 32767, 0x10]
.const halfs f16 0x003c0040
.const lut u8 [0, 1, 2, 255] at=0x8000
.input "in put" 1x3x8x8 i8 0x100000 0.0213 0
.output y 1x4x8x8 u8 0x110000 0.5 -3
.tensor pc 1x2x4x4 u8 0x120000 @1:0.02,0.0001 0,3
.debug "first layer" 0 0 0
NOP cycles=17
SYNC engines=15 wait=0,31 signal=5
LOAD dst=0 src=0x100000 dtype=i8 n=1 c=3 h=8 w=8 src_sn=192 src_sc=64 src_sh=8 src_sw=1 dst_sn=192 dst_sc=64 dst_sh=8 dst_sw=1 signal=0
LOAD dst=4096 src=@w+1 dtype=i8 trans=1 n=1 c=1 h=2 w=4 src_sn=8 src_sc=8 src_sh=4 src_sw=1 dst_sn=8 dst_sc=8 dst_sh=2 dst_sw=1 eng=0
.debug "conv \"q\"" 1 2 3
CONV in=0 wt=4096 out=8192 acc=16384 bias=20480 rq=24576 n=1 ic=3 ih=8 iw=8 oc=4 oh=8 ow=8 kh=3 kw=3 stride_h=1 stride_w=1 pad_t=1 pad_l=1 pad_b=1 pad_r=1 dil_h=1 dil_w=1 groups=1 dt_in=i8 dt_w=i8 dt_out=u8 acc_in=1 has_bias=1 rq_mode=channel act=clamp zp_in=-1 zp_out=-3 act_hi=100 wait=0
MATMUL a=0 b=4096 out=8192 acc=0 bias=20480 rq=24576 batch=2 m=16 k=32 n=8 b_trans=1 b_bcast=1 dt_a=bf16 dt_b=bf16 dt_out=f32 has_bias=1 act=relu
DWCONV in=0 wt=4096 out=8192 n=1 ic=3 ih=8 iw=8 oc=3 oh=4 ow=4 kh=3 kw=3 stride_h=2 stride_w=2 pad_t=1 pad_l=1 pad_b=0 pad_r=0 dil_h=1 dil_w=1 groups=3 dt_in=u8 dt_w=i8 dt_out=i8 rq_mode=tensor zp_in=128
ELTWISE a=0 b=4096 out=8192 n=1 c=4 h=8 w=8 bcast_a=0 bcast_b=13 op=mul dt_a=i8 dt_b=u8 dt_out=i16 m_a=-32768 s_a=63 zp_a=-32768 m_b=32767 s_b=1 zp_b=32767 s_out=40 zp_out=7 act=none act_hi=-5
LUT in=0 out=8192 table=32768 n=1 c=4 h=8 w=8 dt_in=u8 dt_out=i8
POOL in=0 out=8192 n=1 c=4 ih=7 iw=7 oh=1 ow=1 kh=7 kw=7 stride_h=1 stride_w=1 mode=avg count_pad=1 dt=i8 m=21 s=10 zp_in=-2 zp_out=3
REQUANT in=0 out=8192 rq=24576 n=1 c=4 h=8 w=8 rq_mode=tensor m=-2147483648 s=31 zp_in=5 zp_out=-5 dt_in=i32 dt_out=i8 act=relu act_hi=0
CAST in=0 out=8192 n=1 c=4 h=8 w=8 dt_in=i8 dt_out=f32 scale=0.0213 zp=-1
CAST in=0 out=8192 n=1 c=4 h=8 w=8 dt_in=f32 dt_out=bf16 scale=0x7fc00001 zp=0
REDUCE in=0 out=8192 n=1 c=4 h=8 w=8 axis=3 op=sum dt_in=i8 dt_out=i32 m=1 s=0 zp_in=0 zp_out=0 scale=0.125
EXP in=0 out=8192 n=1 c=4 h=8 w=8 dt_in=f32 dt_out=f16
EXP in=0 out=8192 n=1 c=4 h=8 w=8 dt_in=bf16 dt_out=bf16 func=4 alpha=0.2 beta=0.5
ELTWISE a=0 b=4096 out=8192 n=1 c=4 h=8 w=8 bcast_b=15 op=div dt_a=f32 dt_b=f32 dt_out=bf16 act=clamp act_hi=16512 zp_out=0
SOFTMAX in=0 out=8192 n=2 c=1 h=1 w=1000 axis=3 dt_in=f32 dt_out=f32 dbg=1
NORM in=0 out=8192 gamma=65536 beta=66560 n=1 c=16 h=1 w=256 axis=3 mode=layer affine=1 eps=1e-05 dt_in=f32 dt_out=f32 dbg=0
RESIZE in=0 out=8192 n=1 c=4 ih=4 iw=4 oh=8 ow=8 full_ih=4 full_oh=8 ih0=0 oh0=0 ctm=half_pixel dt_in=i8 dt_out=i8 zp=-3 scale_h=2 scale_w=2
RESIZE in=0 out=8192 n=1 c=2 ih=3 iw=5 oh=4 ow=3 full_ih=9 full_oh=12 ih0=2 oh0=4 ctm=align_corners dt_in=f32 dt_out=bf16 scale_h=0 scale_w=0.6
MOVE dst=100000 src=0 dtype=f32 n=1 c=16 h=1 w=256 src_sn=4096 src_sc=256 src_sh=256 src_sw=1 dst_sn=0 dst_sc=1 dst_sh=16 dst_sw=16 signal=3
STORE dst=@y src=8192 dtype=u8 n=1 c=4 h=8 w=8 src_sn=256 src_sc=64 src_sh=8 src_sw=1 dst_sn=256 dst_sc=64 dst_sh=8 dst_sw=1 wait=3
END code=7
