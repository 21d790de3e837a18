"""The step timeline in the centre (docs/window-timeline.md): the view, its item model and
its delegate. Fed events by the window; emits the step the user selects."""
