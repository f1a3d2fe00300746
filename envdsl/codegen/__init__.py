"""Code generation: checked spec -> view models -> jinja2 templates -> black-formatted Python."""
