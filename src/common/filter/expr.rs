//! The compiled selector and its three-valued evaluation (Java `ComparisonExpression`,
//! `LogicExpression`, `UnaryExpression`): a missing property is `NULL`, a comparison with `NULL`
//! is `NULL`, and only `TRUE` matches. Strings meet numbers through Java's `valueOf` rules.

use std::cmp::Ordering;

use crate::common::properties::Properties;

/// A literal (Java `ConstantExpression`; `TRUE`/`FALSE`/`NULL` are `BooleanConstantExpression`).
#[derive(Debug, Clone, PartialEq)]
pub enum Constant {
    Null,
    Bool(bool),
    Int(i32),
    Long(i64),
    Double(f64),
    Str(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    Gt,
    Ge,
    Lt,
    Le,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrOp {
    Contains,
    StartsWith,
    EndsWith,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Const(Constant),
    Property(String),
    Negate(Box<Expr>),
    Not(Box<Expr>),
    /// A bare property used as a condition (Java `createBooleanCast`).
    BoolCast(Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    /// `=`; also `IS NULL` against `Const(Null)`.
    Equal(Box<Expr>, Box<Expr>),
    Compare(Order, Box<Expr>, Box<Expr>),
    In {
        property: String,
        list: Vec<String>,
        not: bool,
    },
    Text {
        op: StrOp,
        not: bool,
        value: Box<Expr>,
        search: String,
    },
}

/// A value during evaluation; strings borrow from the expression or the message.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    Null,
    Bool(bool),
    Int(i32),
    Long(i64),
    Double(f64),
    Str(&'a str),
}

/// Java threw while evaluating (a `NumberFormatException` or `ClassCastException`); the broker
/// logs it and treats the message as not matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvalError(pub String);

type Eval<'a> = Result<Value<'a>, EvalError>;

impl Expr {
    /// Java's `BooleanExpression` marker: what may stand as a condition.
    pub fn is_boolean(&self) -> bool {
        !matches!(
            self,
            Expr::Const(Constant::Int(_) | Constant::Long(_) | Constant::Double(_))
                | Expr::Const(Constant::Str(_))
                | Expr::Property(_)
                | Expr::Negate(_)
        )
    }

    /// Nesting depth, bounded by the parser so evaluation and drop cannot exhaust the stack.
    pub fn depth(&self) -> usize {
        match self {
            Expr::Const(_) | Expr::Property(_) | Expr::In { .. } => 1,
            Expr::Negate(e) | Expr::Not(e) | Expr::BoolCast(e) => 1 + e.depth(),
            Expr::Text { value, .. } => 1 + value.depth(),
            Expr::And(l, r) | Expr::Or(l, r) | Expr::Equal(l, r) | Expr::Compare(_, l, r) => {
                1 + l.depth().max(r.depth())
            }
        }
    }

    pub fn evaluate<'a>(&'a self, props: &'a Properties) -> Eval<'a> {
        match self {
            Expr::Const(c) => Ok(constant(c)),
            Expr::Property(name) => Ok(props.get(name).map_or(Value::Null, Value::Str)),
            Expr::Negate(e) => Ok(negate(e.evaluate(props)?)),
            Expr::Not(e) => Ok(match as_bool(e.evaluate(props)?)? {
                Some(b) => Value::Bool(!b),
                None => Value::Null,
            }),
            Expr::BoolCast(e) => Ok(match e.evaluate(props)? {
                Value::Null => Value::Null,
                Value::Bool(b) => Value::Bool(b),
                _ => Value::Bool(false),
            }),
            Expr::And(l, r) => and(l, r, props),
            Expr::Or(l, r) => or(l, r, props),
            Expr::Equal(l, r) => equal(l.evaluate(props)?, r.evaluate(props)?),
            Expr::Compare(op, l, r) => compare_op(*op, l, r, props),
            Expr::In {
                property,
                list,
                not,
            } => Ok(match props.get(property) {
                None => Value::Null,
                Some(v) => Value::Bool(list.iter().any(|x| x == v) ^ not),
            }),
            Expr::Text {
                op,
                not,
                value,
                search,
            } => text(*op, *not, value.evaluate(props)?, search),
        }
    }

    /// Only `TRUE` matches; `FALSE`, `NULL` and evaluation errors do not.
    pub fn matches(&self, props: &Properties) -> bool {
        matches!(self.evaluate(props), Ok(Value::Bool(true)))
    }
}

fn constant(c: &Constant) -> Value<'_> {
    match c {
        Constant::Null => Value::Null,
        Constant::Bool(b) => Value::Bool(*b),
        Constant::Int(i) => Value::Int(*i),
        Constant::Long(l) => Value::Long(*l),
        Constant::Double(d) => Value::Double(*d),
        Constant::Str(s) => Value::Str(s),
    }
}

fn negate(v: Value<'_>) -> Value<'_> {
    match v {
        Value::Int(i) => Value::Int(i.wrapping_neg()),
        Value::Long(l) => Value::Long(l.wrapping_neg()),
        Value::Double(d) => Value::Double(-d),
        _ => Value::Null,
    }
}

/// Java's `(Boolean)` cast inside `NOT`, `AND`, `OR`.
fn as_bool(v: Value<'_>) -> Result<Option<bool>, EvalError> {
    match v {
        Value::Null => Ok(None),
        Value::Bool(b) => Ok(Some(b)),
        other => Err(EvalError(format!("{other:?} cannot be cast to Boolean"))),
    }
}

fn and<'a>(l: &'a Expr, r: &'a Expr, props: &'a Properties) -> Eval<'a> {
    let lv = as_bool(l.evaluate(props)?)?;
    if lv == Some(false) {
        return Ok(Value::Bool(false));
    }
    let rv = as_bool(r.evaluate(props)?)?;
    Ok(match (lv, rv) {
        (_, Some(false)) => Value::Bool(false),
        (Some(true), Some(true)) => Value::Bool(true),
        _ => Value::Null,
    })
}

fn or<'a>(l: &'a Expr, r: &'a Expr, props: &'a Properties) -> Eval<'a> {
    let lv = as_bool(l.evaluate(props)?)?;
    if lv == Some(true) {
        return Ok(Value::Bool(true));
    }
    let rv = as_bool(r.evaluate(props)?)?;
    Ok(match (lv, rv) {
        (_, Some(true)) => Value::Bool(true),
        (Some(false), Some(false)) => Value::Bool(false),
        _ => Value::Null,
    })
}

/// `doCreateEqual`: NULL = NULL is TRUE, NULL = x is NULL, x = NULL is FALSE.
fn equal<'a>(lv: Value<'a>, rv: Value<'a>) -> Eval<'a> {
    match (lv, rv) {
        (Value::Null, Value::Null) => Ok(Value::Bool(true)),
        (Value::Null, _) => Ok(Value::Null),
        (_, Value::Null) => Ok(Value::Bool(false)),
        (l, r) => Ok(Value::Bool(java_compare(l, r)? == Ordering::Equal)),
    }
}

fn compare_op<'a>(op: Order, l: &'a Expr, r: &'a Expr, props: &'a Properties) -> Eval<'a> {
    let lv = l.evaluate(props)?;
    if lv == Value::Null {
        return Ok(Value::Null);
    }
    let rv = r.evaluate(props)?;
    let ord = match (lv, rv) {
        (_, Value::Null) => return Ok(Value::Null),
        // two strings order as numbers (Double.valueOf), never lexically
        (Value::Str(a), Value::Str(b)) => double_order(java_double(a)?, java_double(b)?),
        (l, r) => java_compare(l, r)?,
    };
    Ok(Value::Bool(match op {
        Order::Gt => ord == Ordering::Greater,
        Order::Ge => ord != Ordering::Less,
        Order::Lt => ord == Ordering::Less,
        Order::Le => ord != Ordering::Greater,
    }))
}

fn text<'a>(op: StrOp, not: bool, v: Value<'a>, search: &str) -> Eval<'a> {
    let Value::Str(s) = v else {
        return Ok(Value::Bool(false));
    };
    if search.is_empty() {
        return Ok(Value::Bool(false));
    }
    let hit = match op {
        StrOp::Contains => s.contains(search),
        StrOp::StartsWith => s.starts_with(search),
        StrOp::EndsWith => s.ends_with(search),
    };
    Ok(Value::Bool(hit ^ not))
}

/// Java `ComparisonExpression.__compare` with string conversion on: numbers widen, a string
/// meeting a number is parsed as that number's type (failure is an error), a string meeting a
/// boolean is `Boolean.valueOf`, and any other mix orders as "less".
pub fn java_compare(l: Value<'_>, r: Value<'_>) -> Result<Ordering, EvalError> {
    use Value::*;
    Ok(match (l, r) {
        (Bool(a), Bool(b)) => a.cmp(&b),
        (Int(a), Int(b)) => a.cmp(&b),
        (Long(a), Long(b)) => a.cmp(&b),
        (Double(a), Double(b)) => double_order(a, b),
        (Str(a), Str(b)) => a.encode_utf16().cmp(b.encode_utf16()),
        (Bool(_), Str(_)) => return Err(EvalError("Boolean cannot be cast to String".into())),
        (Int(a), Long(b)) => i64::from(a).cmp(&b),
        (Int(a), Double(b)) => double_order(f64::from(a), b),
        (Int(a), Str(b)) => a.cmp(&java_int(b)?),
        (Long(a), Int(b)) => a.cmp(&i64::from(b)),
        (Long(a), Double(b)) => double_order(a as f64, b),
        (Long(a), Str(b)) => a.cmp(&java_long(b)?),
        (Double(a), Int(b)) => double_order(a, f64::from(b)),
        (Double(a), Long(b)) => double_order(a, b as f64),
        (Double(a), Str(b)) => double_order(a, java_double(b)?),
        (Str(a), Bool(b)) => a.eq_ignore_ascii_case("true").cmp(&b),
        (Str(a), Int(b)) => java_int(a)?.cmp(&b),
        (Str(a), Long(b)) => java_long(a)?.cmp(&b),
        (Str(a), Double(b)) => double_order(java_double(a)?, b),
        _ => Ordering::Less,
    })
}

/// `Double.compare`: -0.0 < 0.0, NaN equal to itself and above everything.
fn double_order(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.total_cmp(&b),
    }
}

fn number_error(s: &str) -> EvalError {
    EvalError(format!("NumberFormatException: For input string: \"{s}\""))
}

/// `Integer.valueOf`: optional sign, ASCII digits, no blanks.
pub fn java_int(s: &str) -> Result<i32, EvalError> {
    s.parse().map_err(|_| number_error(s))
}

/// `Long.valueOf`.
pub fn java_long(s: &str) -> Result<i64, EvalError> {
    s.parse().map_err(|_| number_error(s))
}

/// `Double.valueOf`: blanks trimmed, `NaN`/`Infinity` spelled exactly, an optional `f`/`d`
/// suffix; hexadecimal floats are not accepted.
pub fn java_double(s: &str) -> Result<f64, EvalError> {
    let t = s.trim_matches(|c: char| c <= ' ');
    let unsigned = t.trim_start_matches(['+', '-']);
    if t.len() - unsigned.len() > 1 {
        return Err(number_error(s));
    }
    if unsigned == "NaN" {
        return Ok(f64::NAN);
    }
    if unsigned == "Infinity" {
        return Ok(if t.starts_with('-') {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        });
    }
    let body = t.strip_suffix(['f', 'F', 'd', 'D']).unwrap_or(t);
    let digits_only = body
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'));
    if !digits_only {
        return Err(number_error(s));
    }
    body.parse().map_err(|_| number_error(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_number_parsing() {
        assert_eq!(java_int("+5"), Ok(5));
        assert!(java_int(" 5").is_err());
        assert!(java_int("5.0").is_err());
        assert!(java_int("9999999999").is_err());
        assert_eq!(java_long("9999999999"), Ok(9_999_999_999));
        assert_eq!(java_double(" 1.5d "), Ok(1.5));
        assert_eq!(java_double("-Infinity"), Ok(f64::NEG_INFINITY));
        assert!(java_double("inf").is_err());
        assert!(java_double("nan").is_err());
        assert!(java_double("abc").is_err());
        assert!(java_double("").is_err());
    }

    #[test]
    fn mixed_types_compare_as_java() {
        use Value::*;
        assert_eq!(java_compare(Str("7"), Int(5)), Ok(Ordering::Greater));
        assert_eq!(java_compare(Int(5), Double(5.0)), Ok(Ordering::Equal));
        assert_eq!(java_compare(Str("TRUE"), Bool(true)), Ok(Ordering::Equal));
        assert_eq!(java_compare(Int(1), Bool(true)), Ok(Ordering::Less));
        assert!(java_compare(Str("x"), Int(1)).is_err());
        assert!(java_compare(Bool(true), Str("true")).is_err());
    }
}
