#include "views/editor/CudaLexer.h"

#include <QColor>
#include <QFont>
#include <QFontDatabase>

namespace kforge::views {
namespace {

// Execution-space and memory qualifiers, launch attributes, built-in variables and types,
// synchronization, warp, atomic, cache-hinted load/store, fast-math, half/bfloat16/FP8 and bit
// intrinsics, vector types and their constructors, cooperative groups, and the architecture macros.
constexpr const char* kCudaKeywords =
    "__global__ __device__ __host__ __shared__ __constant__ __managed__ __restrict__ __noinline__ "
    "__forceinline__ __inline__ __launch_bounds__ __maxnreg__ __cluster_dims__ __grid_constant__ "
    "__align__ __builtin_assume __builtin_assume_aligned __builtin_expect __builtin_unreachable "
    "__CUDA_ARCH__ __CUDACC__ __CUDACC_RTC__ __NVCC__ "
    "threadIdx blockIdx blockDim gridDim warpSize dim3 "
    "__syncthreads __syncthreads_count __syncthreads_and __syncthreads_or __syncwarp "
    "__threadfence __threadfence_block __threadfence_system __nanosleep __trap __brkpt "
    "clock clock64 globaltimer "
    "__shfl_sync __shfl_up_sync __shfl_down_sync __shfl_xor_sync __ballot_sync __all_sync "
    "__any_sync __uni_sync __activemask __match_any_sync __match_all_sync __reduce_add_sync "
    "__reduce_min_sync __reduce_max_sync __reduce_and_sync __reduce_or_sync __reduce_xor_sync "
    "atomicAdd atomicSub atomicExch atomicMin atomicMax atomicInc atomicDec atomicCAS atomicAnd "
    "atomicOr atomicXor atomicAdd_block atomicAdd_system atomicCAS_block atomicCAS_system "
    "atomicExch_block atomicMax_block atomicMin_block "
    "__ldg __ldca __ldcg __ldcs __ldlu __ldcv __stwb __stcg __stcs __stwt "
    "__isGlobal __isShared __isConstant __isLocal __cvta_generic_to_shared "
    "__pipeline_memcpy_async __pipeline_commit __pipeline_wait_prior "
    "__expf __exp10f __logf __log2f __log10f __powf __sinf __cosf __tanf __sincosf __fdividef "
    "__fdiv_rn __frcp_rn __fsqrt_rn __frsqrt_rn __fmaf_rn __fmul_rn __fadd_rn __fsub_rn "
    "__saturatef __fmaf_ieee_rn rsqrtf rcbrtf normcdff erfcinvf "
    "__half __half2 __nv_bfloat16 __nv_bfloat162 __nv_fp8_e4m3 __nv_fp8_e5m2 __nv_fp8x2_e4m3 "
    "__nv_fp8x4_e4m3 half half2 nv_bfloat16 nv_bfloat162 "
    "__float2half __float2half_rn __half2float __float2bfloat16 __float2bfloat16_rn "
    "__bfloat162float __floats2half2_rn __float22half2_rn __half22float2 __floats2bfloat162_rn "
    "__float22bfloat162_rn __bfloat1622float2 __low2half __high2half __low2float __high2float "
    "__halves2half2 __half2half2 __low2bfloat16 __high2bfloat16 __halves2bfloat162 "
    "__bfloat162bfloat162 __hadd __hsub __hmul __hdiv __hfma __hneg __habs __hmax __hmin "
    "__hadd2 __hsub2 __hmul2 __h2div __hfma2 __hneg2 __habs2 __hmax2 __hmin2 __hexp __hexp2 "
    "__hlog h2exp h2log hexp hlog hsqrt hrsqrt h2sqrt h2rsqrt "
    "__float2int_rn __float2int_rz __float2uint_rn __int2float_rn __float_as_int __int_as_float "
    "__float_as_uint __uint_as_float __double_as_longlong __longlong_as_double "
    "__popc __popcll __clz __clzll __ffs __ffsll __brev __brevll __byte_perm __funnelshift_l "
    "__funnelshift_r __mul24 __umul24 __mulhi __umulhi __mul64hi __umul64hi __sad __usad "
    "__dp4a __dp2a_lo __dp2a_hi __vadd2 __vadd4 __vmaxs4 __vmins4 "
    "char1 char2 char3 char4 uchar1 uchar2 uchar3 uchar4 short1 short2 short3 short4 ushort1 "
    "ushort2 ushort3 ushort4 int1 int2 int3 int4 uint1 uint2 uint3 uint4 long1 long2 long3 long4 "
    "ulong1 ulong2 ulong3 ulong4 longlong1 longlong2 longlong3 longlong4 ulonglong1 ulonglong2 "
    "ulonglong3 ulonglong4 float1 float2 float3 float4 double1 double2 double3 double4 "
    "make_char4 make_uchar4 make_short2 make_short4 make_int2 make_int3 make_int4 make_uint2 "
    "make_uint3 make_uint4 make_float2 make_float3 make_float4 make_double2 make_half2 "
    "make_bfloat162 "
    "cooperative_groups thread_block thread_block_tile thread_group grid_group coalesced_group "
    "cluster_group this_thread_block this_grid this_cluster tiled_partition coalesced_threads";

QFont monospaceFont()
{
    QFont font = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    font.setStyleHint(QFont::Monospace);
    return font;
}

} // namespace

CudaLexer::CudaLexer(QObject* parent) : QsciLexerCPP(parent)
{
    setDefaultFont(monospaceFont());
}

const char* CudaLexer::language() const
{
    return "CUDA";
}

const char* CudaLexer::keywords(int set) const
{
    if (set == 2)
        return kCudaKeywords;
    return QsciLexerCPP::keywords(set);
}

const char* CudaLexer::cudaKeywords()
{
    return kCudaKeywords;
}

QColor CudaLexer::defaultColor(int style) const
{
    if (style == KeywordSet2)
        return QColor(0x00, 0x6d, 0x77); // teal: apart from the C++ keywords' navy
    return QsciLexerCPP::defaultColor(style);
}

QFont CudaLexer::defaultFont(int style) const
{
    QFont font = monospaceFont();
    if (style == Keyword || style == KeywordSet2)
        font.setBold(true);
    return font;
}

QString CudaLexer::description(int style) const
{
    if (style == KeywordSet2)
        return tr("CUDA keyword or built-in");
    return QsciLexerCPP::description(style);
}

} // namespace kforge::views
