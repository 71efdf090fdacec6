//! common (under construction)
