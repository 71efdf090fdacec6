//! JSON bodies in the shapes Java (fastjson) emits and Java and Go accept.
