//! store (under construction)
