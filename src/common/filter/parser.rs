//! Recursive-descent parser for RocketMQ's SQL92 selector, production for production after Java
//! `SelectorParser.jj`, including its compile-time operand checks. Like the JavaCC parser it
//! stops after one complete expression: trailing tokens are not read (only the one token looked
//! ahead must lex).

use super::expr::{Constant, Expr, Order, StrOp};
use super::lexer::{tokenize, Tok};
use super::FilterError;

/// Deepest expression tree accepted; deeper ones are refused like a Java stack overflow.
pub const MAX_DEPTH: usize = 128;

pub fn parse(sql: &str) -> Result<Expr, FilterError> {
    let mut p = Parser {
        toks: tokenize(sql),
        pos: 0,
    };
    let e = p.or_expression(0)?;
    p.peek()?;
    as_boolean(e)
}

struct Parser {
    toks: Vec<Result<Tok, FilterError>>,
    pos: usize,
}

type PResult = Result<Expr, FilterError>;

fn bx(e: Expr) -> Box<Expr> {
    Box::new(e)
}

fn invalid(msg: String) -> FilterError {
    FilterError::Invalid(msg)
}

/// The tree may not grow past `MAX_DEPTH`.
fn bounded(e: Expr) -> PResult {
    if e.depth() > MAX_DEPTH {
        return Err(FilterError::TooDeep { max: MAX_DEPTH });
    }
    Ok(e)
}

/// Java `asBooleanExpression`: conditions stay, a bare property is cast, anything else fails.
fn as_boolean(e: Expr) -> PResult {
    match e {
        Expr::Property(_) => Ok(Expr::BoolCast(bx(e))),
        e if e.is_boolean() => Ok(e),
        e => Err(invalid(format!(
            "Expression will not result in a boolean value: {e:?}"
        ))),
    }
}

/// `checkLessThanOperand`: numbers and non-boolean expressions may be ordered.
fn check_orderable(e: &Expr) -> Result<(), FilterError> {
    match e {
        Expr::Const(Constant::Int(_) | Constant::Long(_) | Constant::Double(_)) => Ok(()),
        e if matches!(e, Expr::Const(_)) || e.is_boolean() => {
            Err(invalid(format!("Value '{e:?}' cannot be compared.")))
        }
        _ => Ok(()),
    }
}

fn compare(op: Order, l: Expr, r: Expr) -> PResult {
    check_orderable(&l)?;
    check_orderable(&r)?;
    bounded(Expr::Compare(op, bx(l), bx(r)))
}

/// `createEqual`: no `NULL` literal operand, and a boolean literal on the left needs one on the
/// right.
fn equal(l: Expr, r: Expr) -> PResult {
    for e in [&l, &r] {
        if *e == Expr::Const(Constant::Null) {
            return Err(invalid("'NULL' cannot be compared.".into()));
        }
    }
    if let (Expr::Const(lc), Expr::Const(rc)) = (&l, &r) {
        if matches!(lc, Constant::Bool(_)) && !matches!(rc, Constant::Bool(_) | Constant::Null) {
            return Err(invalid(format!(
                "'{lc:?}' cannot be compared with '{rc:?}'"
            )));
        }
    }
    bounded(Expr::Equal(bx(l), bx(r)))
}

/// `createBetween`: literal bounds must be non-null and in order.
fn between(value: Expr, low: Expr, high: Expr) -> PResult {
    if let (Expr::Const(lc), Expr::Const(hc)) = (&low, &high) {
        if *lc == Constant::Null || *hc == Constant::Null {
            return Err(invalid(
                "Illegal values of between, values can not be null!".into(),
            ));
        }
        let none = crate::common::properties::Properties::new();
        let (lv, hv) = (low.evaluate(&none), high.evaluate(&none));
        if let (Ok(lv), Ok(hv)) = (lv, hv) {
            let ord = super::expr::java_compare(hv, lv).map_err(|e| invalid(e.0))?;
            if ord == std::cmp::Ordering::Less {
                return Err(invalid(format!(
                    "Illegal values of between, left value({lc:?}) must less than or equal to right value({hc:?})"
                )));
            }
        }
    }
    let ge = compare(Order::Ge, value.clone(), low)?;
    let le = compare(Order::Le, value, high)?;
    bounded(Expr::And(bx(ge), bx(le)))
}

fn not_between(value: Expr, low: Expr, high: Expr) -> PResult {
    let lt = compare(Order::Lt, value.clone(), low)?;
    let gt = compare(Order::Gt, value, high)?;
    bounded(Expr::Or(bx(lt), bx(gt)))
}

fn in_list(value: Expr, list: Vec<String>, not: bool) -> PResult {
    let Expr::Property(property) = value else {
        return Err(invalid(format!(
            "Expected a property for In expression, got: {value:?}"
        )));
    };
    Ok(Expr::In {
        property,
        list,
        not,
    })
}

fn decimal(image: &str) -> PResult {
    let v: i64 = image.parse().map_err(|_| {
        invalid(format!(
            "NumberFormatException: For input string: \"{image}\""
        ))
    })?;
    Ok(Expr::Const(match i32::try_from(v) {
        Ok(i) => Constant::Int(i),
        Err(_) => Constant::Long(v),
    }))
}

/// `createFloat`: finite and not below `Double.MIN_VALUE` (so `0.0` is refused, as in Java).
fn float(image: &str) -> PResult {
    let v = super::expr::java_double(image).map_err(|e| invalid(e.0))?;
    if v.is_infinite() {
        return Err(invalid(format!("{image} is greater than {}", f64::MAX)));
    }
    if v < f64::from_bits(1) {
        return Err(invalid(format!("{image} is less than 4.9E-324")));
    }
    Ok(Expr::Const(Constant::Double(v)))
}

impl Parser {
    fn peek_at(&self, ahead: usize) -> Result<&Tok, FilterError> {
        let i = (self.pos + ahead).min(self.toks.len().saturating_sub(1));
        match self.toks.get(i) {
            Some(Ok(t)) => Ok(t),
            Some(Err(e)) => Err(e.clone()),
            None => Ok(&Tok::Eof),
        }
    }

    fn peek(&self) -> Result<&Tok, FilterError> {
        self.peek_at(0)
    }

    fn advance(&mut self) -> Result<Tok, FilterError> {
        let t = self.peek()?.clone();
        if t != Tok::Eof {
            self.pos += 1;
        }
        Ok(t)
    }

    fn expect(&mut self, want: Tok) -> Result<(), FilterError> {
        let got = self.advance()?;
        if got != want {
            return Err(FilterError::Unexpected {
                expected: format!("{want:?}"),
                found: format!("{got:?}"),
            });
        }
        Ok(())
    }

    fn enter(depth: usize) -> Result<usize, FilterError> {
        if depth >= MAX_DEPTH {
            return Err(FilterError::TooDeep { max: MAX_DEPTH });
        }
        Ok(depth + 1)
    }

    fn or_expression(&mut self, depth: usize) -> PResult {
        let depth = Self::enter(depth)?;
        let mut left = self.and_expression(depth)?;
        while *self.peek()? == Tok::Or {
            self.advance()?;
            let right = self.and_expression(depth)?;
            left = bounded(Expr::Or(bx(as_boolean(left)?), bx(as_boolean(right)?)))?;
        }
        Ok(left)
    }

    fn and_expression(&mut self, depth: usize) -> PResult {
        let mut left = self.equality_expression(depth)?;
        while *self.peek()? == Tok::And {
            self.advance()?;
            let right = self.equality_expression(depth)?;
            left = bounded(Expr::And(bx(as_boolean(left)?), bx(as_boolean(right)?)))?;
        }
        Ok(left)
    }

    fn equality_expression(&mut self, depth: usize) -> PResult {
        let mut left = self.comparison_expression(depth)?;
        loop {
            match self.peek()? {
                Tok::Eq => {
                    self.advance()?;
                    left = equal(left, self.comparison_expression(depth)?)?;
                }
                Tok::Ne => {
                    self.advance()?;
                    left = bounded(Expr::Not(bx(equal(
                        left,
                        self.comparison_expression(depth)?,
                    )?)))?;
                }
                Tok::Is if *self.peek_at(1)? == Tok::Null => {
                    self.pos += 2;
                    left = bounded(Expr::Equal(bx(left), bx(Expr::Const(Constant::Null))))?;
                }
                Tok::Is => {
                    self.advance()?;
                    self.expect(Tok::Not)?;
                    self.expect(Tok::Null)?;
                    let is_null = Expr::Equal(bx(left), bx(Expr::Const(Constant::Null)));
                    left = bounded(Expr::Not(bx(is_null)))?;
                }
                _ => return Ok(left),
            }
        }
    }

    fn comparison_expression(&mut self, depth: usize) -> PResult {
        let mut left = self.unary_expr(depth)?;
        loop {
            let tok = self.peek()?.clone();
            let negated = tok == Tok::Not;
            let op = if negated {
                self.peek_at(1)?.clone()
            } else {
                tok
            };
            let step = match op {
                Tok::Gt | Tok::Ge | Tok::Lt | Tok::Le if !negated => {
                    self.advance()?;
                    let right = self.unary_expr(depth)?;
                    let order = match op {
                        Tok::Gt => Order::Gt,
                        Tok::Ge => Order::Ge,
                        Tok::Lt => Order::Lt,
                        _ => Order::Le,
                    };
                    compare(order, left, right)?
                }
                Tok::Contains | Tok::StartsWith | Tok::EndsWith => {
                    self.pos += 1 + usize::from(negated);
                    let search = self.string_literal()?;
                    let op = match op {
                        Tok::Contains => StrOp::Contains,
                        Tok::StartsWith => StrOp::StartsWith,
                        _ => StrOp::EndsWith,
                    };
                    bounded(Expr::Text {
                        op,
                        not: negated,
                        value: bx(left),
                        search,
                    })?
                }
                Tok::Between => {
                    self.pos += 1 + usize::from(negated);
                    let low = self.unary_expr(depth)?;
                    self.expect(Tok::And)?;
                    let high = self.unary_expr(depth)?;
                    if negated {
                        not_between(left, low, high)?
                    } else {
                        between(left, low, high)?
                    }
                }
                Tok::In => {
                    self.pos += 1 + usize::from(negated);
                    let list = self.string_list()?;
                    in_list(left, list, negated)?
                }
                _ => return Ok(left),
            };
            left = step;
        }
    }

    fn string_list(&mut self) -> Result<Vec<String>, FilterError> {
        self.expect(Tok::LParen)?;
        let mut list = vec![self.string_literal()?];
        while *self.peek()? == Tok::Comma {
            self.advance()?;
            list.push(self.string_literal()?);
        }
        self.expect(Tok::RParen)?;
        Ok(list)
    }

    fn string_literal(&mut self) -> Result<String, FilterError> {
        match self.advance()? {
            Tok::Str(s) => Ok(s),
            other => Err(FilterError::Unexpected {
                expected: "string literal".into(),
                found: format!("{other:?}"),
            }),
        }
    }

    fn unary_expr(&mut self, depth: usize) -> PResult {
        let depth = Self::enter(depth)?;
        match self.peek()? {
            Tok::Plus => {
                self.advance()?;
                self.unary_expr(depth)
            }
            Tok::Minus => {
                self.advance()?;
                bounded(Expr::Negate(bx(self.unary_expr(depth)?)))
            }
            Tok::Not => {
                self.advance()?;
                let inner = as_boolean(self.unary_expr(depth)?)?;
                bounded(Expr::Not(bx(inner)))
            }
            _ => self.primary_expr(depth),
        }
    }

    fn primary_expr(&mut self, depth: usize) -> PResult {
        match self.advance()? {
            Tok::Str(s) => Ok(Expr::Const(Constant::Str(s))),
            Tok::Decimal(d) => decimal(&d),
            Tok::Float(f) => float(&f),
            Tok::True => Ok(Expr::Const(Constant::Bool(true))),
            Tok::False => Ok(Expr::Const(Constant::Bool(false))),
            Tok::Null => Ok(Expr::Const(Constant::Null)),
            Tok::Id(name) => Ok(Expr::Property(name)),
            Tok::LParen => {
                let e = self.or_expression(depth)?;
                self.expect(Tok::RParen)?;
                Ok(e)
            }
            other => Err(FilterError::Unexpected {
                expected: "literal, property or '('".into(),
                found: format!("{other:?}"),
            }),
        }
    }
}
