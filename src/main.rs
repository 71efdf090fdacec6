//! The `rmqd` binary: load config, start the broker (and the embedded NameServer), wait for a signal.
fn main() {
    println!("rmqd");
}
