//! remoting (under construction)
