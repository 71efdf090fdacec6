//! Typed Java config JSON files (topics.json, consumerOffset.json, ...). (in progress)
