"""Small utilities every stage and face may use: source spans, slotted records, safe terminal
text, atomic writes, private cache directories, packaged resources, work backends. Nothing here
imports the compiler's stages."""
