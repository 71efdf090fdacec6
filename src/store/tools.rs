//! Operator tools: verify and dump a store directory. (in progress)
