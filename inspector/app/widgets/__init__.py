"""Widgets any feature may place: code and JSON views, the find bar, the message bar, form
building blocks, icons, scenario-file dialogs. Imports no feature, no shell, no runtime."""
