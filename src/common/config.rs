//! The one shape of a layer's configuration (broker, store, NameServer): a table of Java key,
//! field, type and documented default, from which [`config_table!`] declares the struct, its
//! `Default`, `set` and `keys_and_values`, so a key cannot be settable but unlisted, or the
//! reverse. Each layer brings the trait that reads and renders its values (its rules and its
//! error type) and, where it has one, its `sanitize()`.
//!
//! ```text
//! config_table! {
//!     #[derive(Debug, Clone)]
//!     pub struct StoreConfig: ConfigValue => ConfigError {
//!         /// Doc, default included.
//!         [unlisted] "javaKey" | "alias" field: Type = default, parse = fn;
//!     }
//!     ignored { "javaKeyWithNoEffect", ... }
//! }
//! ```
//! Everything but the key, field, type and default is optional: `[unlisted]` keeps a key out of
//! `keys_and_values`; `| "alias"` names more keys for the field; `parse = fn(key, raw) ->
//! Result<Type, Error>` replaces the trait for one key; `ignored` keys are accepted and dropped.

/// Declares a config struct from its key table (see the module doc).
macro_rules! config_table {
    (
        $(#[$meta:meta])*
        pub struct $name:ident : $value:path => $err:ty {
            $(
                $(#[doc = $doc:literal])*
                $([$unlisted:ident])? $key:literal $(| $alias:literal)* $field:ident : $t:ty
                    = $default:expr $(, parse = $parse:path)? ;
            )*
        }
        $(ignored { $($ignored:literal),* $(,)? })?
    ) => {
        $(#[$meta])*
        pub struct $name {
            $( $(#[doc = $doc])* pub $field: $t, )*
        }

        impl Default for $name {
            fn default() -> Self {
                Self { $( $field: $default, )* }
            }
        }

        impl $name {
            /// Sets one key from its properties text. `Ok(false)`: not a key of this config.
            pub fn set(&mut self, key: &str, value: &str) -> Result<bool, $err> {
                match key {
                    $( $key $(| $alias)* => {
                        self.$field = $crate::common::config::config_table!(
                            @parse $value, $t, $key, value $(, $parse)?
                        )?;
                    } )*
                    $($( $ignored )|* => {})?
                    _ => return Ok(false),
                }
                Ok(true)
            }

            /// The listed keys with their current values, in table order.
            pub fn keys_and_values(&self) -> Vec<(&'static str, String)> {
                let mut out = Vec::new();
                $(
                    if $crate::common::config::config_table!(@listed $($unlisted)?) {
                        out.push(($key, <$t as $value>::render(&self.$field)));
                    }
                )*
                out
            }
        }
    };
    (@parse $value:path, $t:ty, $key:literal, $raw:ident) => {
        <$t as $value>::parse_value($key, $raw)
    };
    (@parse $value:path, $t:ty, $key:literal, $raw:ident, $parse:path) => {
        $parse($key, $raw)
    };
    (@listed) => { true };
    (@listed unlisted) => { false };
}
pub(crate) use config_table;
