"""Case table for ops/math/bitwise.py (plain data; see tests/ops/_check.py).

The integer widths MXNet 1.9.1 computes (int8, uint8, int32, int64), negative values (two's
complement bits), broadcasting both ways, and int64 values above 2^53 (bits a detour through
float64 would lose).
"""

I32 = {"shape": (3, 4), "dtype": "int32", "low": -1000, "high": 1000}
I32_ROW = {"shape": (1, 4), "dtype": "int32", "low": -1000, "high": 1000}
I32_COL = {"shape": (3, 1), "dtype": "int32", "low": -1000, "high": 1000}
I8 = {"shape": (2, 3, 4), "dtype": "int8", "low": -128, "high": 128}
I8_B = {"shape": (3, 4), "dtype": "int8", "low": -128, "high": 128}
U8 = {"shape": (2, 5), "dtype": "uint8", "low": 0, "high": 256}
BIG = {"value": [2**62 + 2**53 + 1, -(2**61) - 3, 2**60 + 12345, -1], "dtype": "int64"}
BIG_B = {"value": [2**53 + 3, 2**62 + 2**40 + 7, -(2**59) - 1, 2**33 + 5], "dtype": "int64"}
BOOL = {"value": [[True, False, True], [False, False, True]], "dtype": "bool"}

CASES = []
for _op in ("and", "or", "xor"):
    CASES += [
        {"name": f"bitwise_{_op}_int32", "op": f"_npi_bitwise_{_op}", "inputs": [I32, I32]},
        {"name": f"bitwise_{_op}_int32_bcast", "op": f"_npi_bitwise_{_op}",
         "inputs": [I32_ROW, I32_COL]},
        {"name": f"bitwise_{_op}_int8_bcast", "op": f"_npi_bitwise_{_op}", "inputs": [I8, I8_B]},
        {"name": f"bitwise_{_op}_uint8", "op": f"_npi_bitwise_{_op}", "inputs": [U8, U8]},
        {"name": f"bitwise_{_op}_int64_big", "op": f"_npi_bitwise_{_op}", "inputs": [BIG, BIG_B]},
    ]
CASES += [
    {"name": "bitwise_not_int32", "op": "_npi_bitwise_not", "inputs": [I32]},
    {"name": "bitwise_not_int8", "op": "_npi_bitwise_not", "inputs": [I8]},
    {"name": "bitwise_not_uint8", "op": "_npi_bitwise_not", "inputs": [U8]},
    {"name": "bitwise_not_int64_big", "op": "_npi_bitwise_not", "inputs": [BIG]},
    {"name": "bitwise_not_bool", "op": "_npi_bitwise_not", "inputs": [BOOL]},
]
