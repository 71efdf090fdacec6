//! SQL92 property filters (Java `filter` module: `SqlFilter`, `SelectorParser`, the expression
//! classes): compile a consumer's `MessageSelector.bySql` expression once, then decide per message
//! from its properties.
//!
//! Grammar (case-insensitive keywords, Java `SelectorParser.jj`):
//! ```text
//! or     := and (OR and)*
//! and    := eq (AND eq)*
//! eq     := cmp ( '=' cmp | '<>' cmp | IS NULL | IS NOT NULL )*
//! cmp    := unary ( ('>'|'>='|'<'|'<=') unary | [NOT] (CONTAINS|STARTSWITH|ENDSWITH) 'str'
//!                 | [NOT] BETWEEN unary AND unary | [NOT] IN ('str' {, 'str'}) )*
//! unary  := '+' unary | '-' unary | NOT unary | primary
//! primary:= 'str' | 123[L] | 1.5[E3] | TRUE | FALSE | NULL | property | '(' or ')'
//! ```

mod expr;
mod lexer;
mod parser;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

pub use expr::{Constant, EvalError, Expr, Value};
pub use parser::MAX_DEPTH;

use crate::common::properties::Properties;

/// The expression type this module compiles (`ExpressionType.SQL92`).
pub const SQL92: &str = "SQL92";

/// Why an expression does not compile; the text becomes the response remark.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FilterError {
    #[error("Invalid MessageSelector: unexpected character '{found}' at {pos}")]
    Lex { pos: usize, found: char },
    #[error("Invalid MessageSelector: unterminated string literal starting at {pos}")]
    UnterminatedString { pos: usize },
    #[error("Invalid MessageSelector: expected {expected}, found {found}")]
    Unexpected { expected: String, found: String },
    #[error("Invalid MessageSelector: nested deeper than {max}")]
    TooDeep { max: usize },
    #[error("Invalid MessageSelector: {0}")]
    Invalid(String),
}

/// A compiled SQL92 selector.
#[derive(Debug, Clone, PartialEq)]
pub struct SqlFilter {
    expr: Expr,
}

impl SqlFilter {
    /// Compiles `sql` (Java `SqlFilter.compile`).
    pub fn compile(sql: &str) -> Result<Self, FilterError> {
        parser::parse(sql).map(|expr| Self { expr })
    }

    /// Compiles through a process-wide cache of recent expressions (Java keeps 100 in
    /// `SelectorParser.PARSE_CACHE`), so a pull does not re-parse its subscription.
    pub fn compile_cached(sql: &str) -> Result<Arc<Self>, FilterError> {
        const CAPACITY: usize = 100;
        type Cache = Mutex<HashMap<String, Result<Arc<SqlFilter>, FilterError>>>;
        static CACHE: OnceLock<Cache> = OnceLock::new();
        let cache = CACHE.get_or_init(Default::default);
        let mut map = cache.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(hit) = map.get(sql) {
            return hit.clone();
        }
        let compiled = Self::compile(sql).map(Arc::new);
        if map.len() >= CAPACITY {
            map.clear();
        }
        map.insert(sql.to_string(), compiled.clone());
        compiled
    }

    /// `TRUE` only: `FALSE`, `NULL` (an unknown property) and evaluation errors (a property that
    /// is not a number where one is needed) do not match, as in Java `ExpressionMessageFilter`.
    pub fn matches(&self, props: &Properties) -> bool {
        self.expr.matches(props)
    }

    /// The three-valued result, for tests and diagnostics.
    pub fn evaluate<'a>(&'a self, props: &'a Properties) -> Result<Value<'a>, EvalError> {
        self.expr.evaluate(props)
    }
}

#[cfg(test)]
mod tests;
