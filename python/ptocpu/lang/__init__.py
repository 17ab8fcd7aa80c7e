"""The PyPTO language surface beyond the ops of the op table (which the core binds): scalars,
enums, options, loops and conversions. Imports the engine and the core, nothing above them."""
