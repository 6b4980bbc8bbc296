"""Case table for ops/math/linalg.py (plain data; see tests/ops/_check.py).

MXNet's CPU kernels take float32/float64 only, so every case uses those. BLAS-heavy cases
compare at rtol 1e-4 / atol 1e-5.
"""

BLAS = {"rtol": 1e-4, "atol": 1e-5}


def F(*shape, dtype="float32"):
    return {"shape": shape, "dtype": dtype}


SPD = [[4.0, 2.0, 0.4], [2.0, 5.0, 1.0], [0.4, 1.0, 3.0]]
SPD2 = [[2.0, 0.5, 0.0], [0.5, 3.0, 0.2], [0.0, 0.2, 1.0]]
SPD_JUNK_UPPER = [[4.0, 9.0, -9.0], [2.0, 5.0, 7.0], [0.4, 1.0, 3.0]]  # LAPACK reads the lower part
SPD_JUNK_LOWER = [[4.0, 2.0, 0.4], [-9.0, 5.0, 1.0], [8.0, 7.0, 3.0]]
SYMMETRIC_GRAD = {"no_fd": "MXNet's gradient is the symmetric one (A taken as a symmetric "
                            "matrix) while the forward reads one triangle, so differences of the "
                            "forward differ off the diagonal (the MXNet golden checks it)"}
LOW = [[2.0, 0.0, 0.0], [1.0, 3.0, 0.0], [0.5, -1.0, 1.5]]
LOW_JUNK = [[2.0, 9.0, -9.0], [1.0, 3.0, 7.0], [0.5, -1.0, 1.5]]
UP_JUNK = [[2.0, 1.0, 0.5], [9.0, 3.0, -1.0], [-9.0, 7.0, 1.5]]
SYM_INDEF = [[1.0, -2.0, 0.5], [-2.0, 0.3, 1.5], [0.5, 1.5, -1.0]]
GENERAL = [[[1.0, 2.0, 0.5], [0.3, -1.0, 2.0], [1.5, 0.2, 1.0]],
           [[2.0, -1.0, 0.0], [1.0, 1.0, 1.0], [0.0, 3.0, -2.0]]]

CASES = [
    # dot: 2-d, transposes, N-d flattening, vectors
    {"name": "dot_2d", "op": "dot", "inputs": [F(3, 4), F(4, 5)], **BLAS},
    {"name": "dot_transpose_a", "op": "dot", "inputs": [F(4, 3), F(4, 5)],
     "attrs": {"transpose_a": True}, **BLAS},
    {"name": "dot_transpose_b", "op": "dot", "inputs": [F(3, 4), F(5, 4)],
     "attrs": {"transpose_b": True}, **BLAS},
    {"name": "dot_transpose_both", "op": "dot", "inputs": [F(4, 3), F(5, 4)],
     "attrs": {"transpose_a": True, "transpose_b": True}, **BLAS},
    {"name": "dot_nd_lhs", "op": "dot", "inputs": [F(2, 3, 4), F(4, 5)], **BLAS},
    {"name": "dot_nd_both", "op": "dot", "inputs": [F(2, 3, 4), F(4, 5, 2)], **BLAS},
    {"name": "dot_nd_transpose_a", "op": "dot", "inputs": [F(2, 3, 4), F(2, 5)],
     "attrs": {"transpose_a": True}, **BLAS},
    {"name": "dot_nd_transpose_b", "op": "dot", "inputs": [F(2, 3, 4), F(5, 6, 4)],
     "attrs": {"transpose_b": True}, **BLAS},
    {"name": "dot_nd_transpose_both", "op": "dot", "inputs": [F(6, 3, 2), F(5, 2, 6)],
     "attrs": {"transpose_a": True, "transpose_b": True}, **BLAS},
    {"name": "dot_vec_vec", "op": "dot", "inputs": [F(5), F(5)], **BLAS},
    {"name": "dot_vec_mat", "op": "dot", "inputs": [F(3), F(3, 4)], **BLAS},
    {"name": "dot_mat_vec", "op": "dot", "inputs": [F(2, 3), F(3)], **BLAS},
    {"name": "dot_mat_vec_transpose_b", "op": "dot", "inputs": [F(2, 3), F(3)],
     "attrs": {"transpose_b": True}, **BLAS},
    {"name": "dot_float64", "op": "dot", "inputs": [F(3, 4, dtype="float64"),
                                                    F(4, 2, dtype="float64")]},
    # batch_dot
    {"name": "batch_dot", "op": "batch_dot", "inputs": [F(2, 3, 4), F(2, 4, 5)], **BLAS},
    {"name": "batch_dot_transpose_a", "op": "batch_dot", "inputs": [F(2, 4, 3), F(2, 4, 5)],
     "attrs": {"transpose_a": True}, **BLAS},
    {"name": "batch_dot_transpose_b", "op": "batch_dot", "inputs": [F(2, 3, 4), F(2, 5, 4)],
     "attrs": {"transpose_b": True}, **BLAS},
    {"name": "batch_dot_transpose_both", "op": "batch_dot", "inputs": [F(3, 4, 2), F(3, 5, 4)],
     "attrs": {"transpose_a": True, "transpose_b": True}, **BLAS},
    {"name": "batch_dot_4d", "op": "batch_dot", "inputs": [F(2, 2, 3, 4), F(2, 2, 4, 3)], **BLAS},
    {"name": "batch_dot_float64", "op": "batch_dot",
     "inputs": [F(2, 3, 4, dtype="float64"), F(2, 4, 2, dtype="float64")]},
    # gemm2 / gemm
    {"name": "gemm2_2d", "op": "linalg_gemm2", "inputs": [F(3, 4), F(4, 5)], **BLAS},
    {"name": "gemm2_batched_alpha", "op": "linalg_gemm2", "inputs": [F(2, 3, 4), F(2, 4, 5)],
     "attrs": {"alpha": 2.5}, **BLAS},
    {"name": "gemm2_transposes", "op": "linalg_gemm2", "inputs": [F(2, 4, 3), F(2, 5, 4)],
     "attrs": {"transpose_a": True, "transpose_b": True, "alpha": -0.5}, **BLAS},
    {"name": "gemm2_axis0", "op": "linalg_gemm2", "inputs": [F(3, 2, 4), F(4, 2, 5)],
     "attrs": {"axis": 0}, **BLAS},
    {"name": "gemm2_axis1_4d", "op": "linalg_gemm2", "inputs": [F(2, 3, 2, 4), F(2, 4, 2, 3)],
     "attrs": {"axis": 1, "transpose_b": False}, **BLAS},
    {"name": "gemm2_float64", "op": "linalg_gemm2",
     "inputs": [F(3, 4, dtype="float64"), F(5, 4, dtype="float64")],
     "attrs": {"transpose_b": True}},
    {"name": "gemm", "op": "linalg_gemm", "inputs": [F(2, 3, 4), F(2, 4, 5), F(2, 3, 5)],
     "attrs": {"alpha": 2.0, "beta": -0.5}, **BLAS},
    {"name": "gemm_default_coefs", "op": "linalg_gemm", "inputs": [F(3, 4), F(4, 2), F(3, 2)],
     **BLAS},
    {"name": "gemm_transposes_axis0", "op": "linalg_gemm",
     "inputs": [F(4, 2, 3), F(5, 2, 4), F(3, 2, 5)],
     "attrs": {"transpose_a": True, "transpose_b": True, "axis": 0, "beta": 2.0}, **BLAS},
    # LAPACK-backed ops
    {"name": "potrf", "op": "linalg_potrf", "inputs": [{"value": SPD}], **BLAS,
     **SYMMETRIC_GRAD},
    {"name": "potrf_batch", "op": "linalg_potrf", "inputs": [{"value": [SPD, SPD2]}], **BLAS,
     **SYMMETRIC_GRAD},
    {"name": "potrf_reads_lower", "op": "linalg_potrf", "inputs": [{"value": SPD_JUNK_UPPER}],
     **BLAS, **SYMMETRIC_GRAD},
    {"name": "potrf_upper", "op": "linalg_potrf", "inputs": [{"value": SPD_JUNK_LOWER}],
     "attrs": {"lower": False}, **BLAS, **SYMMETRIC_GRAD},
    {"name": "potri", "op": "linalg_potri", "inputs": [{"value": LOW_JUNK}], **BLAS},
    {"name": "potri_upper", "op": "linalg_potri", "inputs": [{"value": UP_JUNK}],
     "attrs": {"lower": False}, **BLAS},
    {"name": "trmm", "op": "linalg_trmm", "inputs": [{"value": LOW_JUNK}, F(3, 4)], **BLAS},
    {"name": "trmm_flags", "op": "linalg_trmm", "inputs": [{"value": UP_JUNK}, F(4, 3)],
     "attrs": {"transpose": True, "rightside": True, "lower": False, "alpha": 2.0}, **BLAS},
    {"name": "trmm_transpose", "op": "linalg_trmm", "inputs": [{"value": LOW_JUNK}, F(3, 2)],
     "attrs": {"transpose": True}, **BLAS},
    {"name": "trsm", "op": "linalg_trsm", "inputs": [{"value": LOW_JUNK}, F(3, 4)], **BLAS},
    {"name": "trsm_flags", "op": "linalg_trsm", "inputs": [{"value": UP_JUNK}, F(4, 3)],
     "attrs": {"transpose": True, "rightside": True, "lower": False, "alpha": -1.5}, **BLAS},
    {"name": "trsm_rightside", "op": "linalg_trsm", "inputs": [{"value": LOW_JUNK}, F(2, 3)],
     "attrs": {"rightside": True}, **BLAS},
    {"name": "syrk", "op": "linalg_syrk", "inputs": [F(2, 3, 4)], "attrs": {"alpha": 1.5}, **BLAS},
    {"name": "syrk_transpose", "op": "linalg_syrk", "inputs": [F(3, 4)],
     "attrs": {"transpose": True}, **BLAS},
    {"name": "sumlogdiag", "op": "linalg_sumlogdiag", "inputs": [{"value": [SPD, SPD2]}], **BLAS},
    {"name": "sumlogdiag_single", "op": "linalg_sumlogdiag", "inputs": [{"value": SPD}], **BLAS},
    {"name": "extractdiag", "op": "linalg_extractdiag", "inputs": [F(2, 4, 4)]},
    {"name": "extractdiag_offset", "op": "linalg_extractdiag", "inputs": [F(4, 4)],
     "attrs": {"offset": 1}},
    {"name": "extractdiag_neg_offset", "op": "linalg_extractdiag", "inputs": [F(2, 3, 3)],
     "attrs": {"offset": -2}},
    {"name": "makediag", "op": "linalg_makediag", "inputs": [F(2, 3)]},
    {"name": "makediag_offset", "op": "linalg_makediag", "inputs": [F(3)], "attrs": {"offset": 2}},
    {"name": "makediag_neg_offset", "op": "linalg_makediag", "inputs": [F(2, 2)],
     "attrs": {"offset": -1}},
    {"name": "inverse", "op": "linalg_inverse", "inputs": [{"value": GENERAL}], **BLAS},
    {"name": "inverse_float64", "op": "linalg_inverse",
     "inputs": [{"value": SPD, "dtype": "float64"}]},
    {"name": "det", "op": "linalg_det", "inputs": [{"value": GENERAL}], **BLAS},
    {"name": "det_single", "op": "linalg_det", "inputs": [{"value": SPD}], **BLAS},
    {"name": "slogdet", "op": "linalg_slogdet", "inputs": [{"value": GENERAL}], **BLAS},
    # LQ factorisation (outputs Q, L) and symmetric eigendecomposition (outputs U, L)
    {"name": "gelqf", "op": "linalg_gelqf", "inputs": [{"value": [[1, 2, 3], [4, 5, 6]]}],
     **BLAS},
    {"name": "gelqf_batch", "op": "_linalg_gelqf", "inputs": [F(2, 3, 5)], **BLAS},
    {"name": "gelqf_square_float64", "op": "linalg_gelqf",
     "inputs": [F(4, 4, dtype="float64")], "rtol": 1e-10, "atol": 1e-12},
    {"name": "syevd", "op": "_linalg_syevd", "inputs": [{"value": SPD}], **BLAS,
     **SYMMETRIC_GRAD},
    {"name": "syevd_batch_reads_lower", "op": "_linalg_syevd",
     "inputs": [{"value": [SPD_JUNK_UPPER, SPD2, SYM_INDEF]}], **BLAS, **SYMMETRIC_GRAD},
    {"name": "syevd_float64", "op": "_linalg_syevd",
     "inputs": [{"value": SYM_INDEF, "dtype": "float64"}], "rtol": 1e-10, "atol": 1e-12,
     **SYMMETRIC_GRAD},
    # packed triangles: lower row by row, upper column by column
    {"name": "extracttrian", "op": "linalg_extracttrian", "inputs": [F(2, 4, 4)]},
    {"name": "extracttrian_upper", "op": "linalg_extracttrian", "inputs": [F(4, 4)],
     "attrs": {"lower": False}},
    {"name": "extracttrian_offset", "op": "_linalg_extracttrian", "inputs": [F(2, 4, 4)],
     "attrs": {"offset": 1}},
    {"name": "extracttrian_neg_offset_float64", "op": "linalg_extracttrian",
     "inputs": [F(5, 5, dtype="float64")], "attrs": {"offset": -2, "lower": False}},
    {"name": "maketrian", "op": "linalg_maketrian", "inputs": [F(2, 6)]},
    {"name": "maketrian_upper", "op": "linalg_maketrian", "inputs": [F(10)],
     "attrs": {"lower": False}},
    {"name": "maketrian_offset", "op": "_linalg_maketrian", "inputs": [F(2, 2, 3)],
     "attrs": {"offset": 2}},
    {"name": "maketrian_neg_offset_float64", "op": "linalg_maketrian",
     "inputs": [F(3, dtype="float64")], "attrs": {"offset": -1}},
]
