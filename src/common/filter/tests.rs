use super::*;

fn props(pairs: &[(&str, &str)]) -> Properties {
    let mut p = Properties::new();
    for (k, v) in pairs {
        p.insert(*k, *v);
    }
    p
}

fn m(sql: &str, pairs: &[(&str, &str)]) -> bool {
    SqlFilter::compile(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .matches(&props(pairs))
}

fn eval(sql: &str, pairs: &[(&str, &str)]) -> String {
    let f = SqlFilter::compile(sql).unwrap();
    let p = props(pairs);
    let out = match f.evaluate(&p) {
        Ok(v) => format!("{v:?}"),
        Err(_) => "error".to_string(),
    };
    out
}

#[test]
fn numeric_comparison_converts_property_strings() {
    assert!(m("a > 5", &[("a", "6")]));
    assert!(!m("a > 5", &[("a", "5")]));
    assert!(m("a >= 5", &[("a", "5")]));
    assert!(m("a < 5.5", &[("a", "5")]));
    assert!(m("a <= -1", &[("a", "-1")]));
    assert!(m("a = 5", &[("a", "5")]));
    assert!(m("a <> 5", &[("a", "4")]));
    assert!(
        !m("a > 5", &[("a", "9999999999")]),
        "Integer.valueOf overflows: error"
    );
    assert!(m("a > 5L", &[("a", "6")]));
    assert!(m("a > 2147483648", &[("a", "9999999999")]));
}

#[test]
fn unknown_property_is_null_and_never_matches() {
    assert_eq!(eval("a > 5", &[]), "Null");
    assert!(!m("a > 5", &[]));
    assert!(!m("NOT (a > 5)", &[]));
    assert!(!m("a <> 5", &[]));
    assert!(m("a IS NULL", &[]));
    assert!(!m("a IS NOT NULL", &[]));
    assert!(m("a IS NOT NULL", &[("a", "")]));
    assert!(!m("a IN ('x')", &[]));
    assert!(!m("a NOT IN ('x')", &[]));
}

#[test]
fn three_valued_logic() {
    assert!(m("a > 5 OR b = 'x'", &[("b", "x")]));
    assert_eq!(eval("a > 5 OR b = 'x'", &[("b", "y")]), "Null");
    assert_eq!(eval("a > 5 AND b = 'x'", &[("b", "y")]), "Bool(false)");
    assert_eq!(eval("a > 5 AND b = 'x'", &[("b", "x")]), "Null");
    assert!(m("(a > 5 AND b = 'x') OR c = 'z'", &[("c", "z")]));
}

#[test]
fn strings_in_between_and_text_operators() {
    assert!(m("TAGS = 'TagA'", &[("TAGS", "TagA")]));
    assert!(m("a IN ('x', 'y')", &[("a", "y")]));
    assert!(m("a NOT IN ('x', 'y')", &[("a", "z")]));
    assert!(m("a BETWEEN 1 AND 3", &[("a", "3")]));
    assert!(!m("a BETWEEN 1 AND 3", &[("a", "4")]));
    assert!(m("a NOT BETWEEN 1 AND 3", &[("a", "4")]));
    assert!(m("s CONTAINS 'bc'", &[("s", "abcd")]));
    assert!(m("s STARTSWITH 'ab'", &[("s", "abcd")]));
    assert!(m("s ENDSWITH 'cd'", &[("s", "abcd")]));
    assert!(m("s NOT CONTAINS 'x'", &[("s", "abcd")]));
    assert!(
        !m("s NOT CONTAINS 'x'", &[]),
        "missing property: FALSE, not NULL"
    );
    assert!(!m("s CONTAINS ''", &[("s", "abcd")]));
    assert!(m("s = 'it''s'", &[("s", "it's")]));
}

#[test]
fn two_strings_order_as_numbers_and_bad_numbers_do_not_match() {
    assert!(m("a > b", &[("a", "10"), ("b", "9")]));
    assert_eq!(eval("a > b", &[("a", "x"), ("b", "9")]), "error");
    assert_eq!(eval("a > 5", &[("a", "5.5")]), "error");
    assert!(m("a > 5.0e0", &[("a", "5.5")]));
    assert_eq!(eval("a = 5", &[("a", "abc")]), "error");
}

#[test]
fn booleans_and_bare_properties() {
    assert!(m("TRUE", &[]));
    assert!(!m("FALSE", &[]));
    assert!(m("flag = TRUE", &[("flag", "true")]));
    assert!(m("flag = TRUE", &[("flag", "TRUE")]));
    assert!(
        !m("flag", &[("flag", "true")]),
        "a property is a string, never a Boolean"
    );
    assert!(m("NOT (a = 1)", &[("a", "2")]));
    assert!(m("a > -5", &[("a", "-4")]));
    assert!(m("a > - -5", &[("a", "6")]));
}

#[test]
fn keywords_are_case_insensitive_and_property_names_are_not() {
    assert!(m("a > 1 and b is null", &[("a", "2")]));
    assert!(!m("A > 1", &[("a", "2")]));
}

#[test]
fn compile_errors_match_java() {
    for bad in [
        "",
        "a >",
        "a > 'x'",
        "'x' < a",
        "a = NULL",
        "5",
        "TRUE = 5",
        "a BETWEEN 3 AND 1",
        "a BETWEEN NULL AND 1",
        "a IN ()",
        "a IN (1)",
        "5 IN ('a')",
        "(a > 5",
        "a IS 5",
        "a > 0.0",
        "a > 1e999",
        "a > 9223372036854775808",
        "a > 5 #",
        "NOT 5",
        "a > (b > 1)",
        "'abc",
    ] {
        assert!(
            SqlFilter::compile(bad).is_err(),
            "{bad:?} should not compile"
        );
    }
}

#[test]
fn trailing_tokens_after_a_complete_expression_are_ignored_as_in_java() {
    assert!(m("a > 5 garbage", &[("a", "6")]));
    assert!(m("a > 5)", &[("a", "6")]));
    assert!(!m("a + 1", &[("a", "6")]), "parses as the bare property a");
}

#[test]
fn deep_nesting_is_refused_not_a_stack_overflow() {
    let deep = format!("{}a > 1{}", "(".repeat(10_000), ")".repeat(10_000));
    assert!(matches!(
        SqlFilter::compile(&deep),
        Err(FilterError::TooDeep { .. })
    ));
    let nots = format!("{}a > 1", "NOT ".repeat(10_000));
    assert!(SqlFilter::compile(&nots).is_err());
    let chain = vec!["a > 1"; 10_000].join(" AND ");
    assert!(SqlFilter::compile(&chain).is_err());
    let ok = vec!["a > 1"; 50].join(" AND ");
    assert!(m(&ok, &[("a", "2")]));
}

#[test]
fn cache_returns_the_same_result() {
    let a = SqlFilter::compile_cached("x > 1").unwrap();
    let b = SqlFilter::compile_cached("x > 1").unwrap();
    assert!(Arc::ptr_eq(&a, &b));
    assert!(SqlFilter::compile_cached("x >").is_err());
}

/// Fuzz-style: random token soups and random bytes never panic in compile or evaluate.
#[test]
fn random_expressions_never_panic() {
    const WORDS: &[&str] = &[
        "a",
        "b",
        "TAGS",
        "NOT",
        "AND",
        "OR",
        "BETWEEN",
        "IN",
        "IS",
        "NULL",
        "TRUE",
        "FALSE",
        "CONTAINS",
        "STARTSWITH",
        "ENDSWITH",
        "(",
        ")",
        ",",
        "=",
        "<>",
        ">",
        ">=",
        "<",
        "<=",
        "+",
        "-",
        "'x'",
        "'5'",
        "''",
        "5",
        "0",
        "2147483648",
        "9223372036854775807",
        "1.5",
        ".5e3",
        "5L",
        "--",
        "/*",
        "*/",
        "\n",
        "'",
        "#",
        "é",
        "$v",
    ];
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let values = ["6", "x", "", "-0", "NaN", "1e400", "true", "2147483648"];
    for _ in 0..20_000 {
        let n = (next() % 12) as usize;
        let sql: String = (0..n)
            .map(|_| WORDS[(next() % WORDS.len() as u64) as usize])
            .collect::<Vec<_>>()
            .join(" ");
        if let Ok(f) = SqlFilter::compile(&sql) {
            let v = values[(next() % values.len() as u64) as usize];
            let _ = f.matches(&props(&[("a", v), ("b", "3"), ("TAGS", v)]));
            let _ = f.matches(&Properties::new());
        }
    }
    for _ in 0..5_000 {
        let n = (next() % 40) as usize;
        let bytes: Vec<u8> = (0..n).map(|_| next() as u8).collect();
        let _ = SqlFilter::compile(&String::from_utf8_lossy(&bytes));
    }
}

#[test]
fn an_error_anywhere_fails_the_whole_evaluation() {
    let sql = "a BETWEEN 2 AND 3 OR a IN ('seven')";
    assert!(m(sql, &[("a", "2")]));
    assert!(
        !m(sql, &[("a", "seven")]),
        "Integer.valueOf(\"seven\") throws first"
    );
    assert!(m("a IN ('seven') OR a BETWEEN 2 AND 3", &[("a", "seven")]));
}
