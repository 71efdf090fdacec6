//! namesrv (under construction)
