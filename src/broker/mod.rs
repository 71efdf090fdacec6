//! broker (under construction)
