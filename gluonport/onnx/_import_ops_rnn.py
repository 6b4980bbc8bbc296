"""Import handlers: LSTM, GRU, RNN (placeholder until written)."""
