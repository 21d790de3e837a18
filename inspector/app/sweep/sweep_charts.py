"""The sweep's three charts (pyqtgraph, docs/window-sweep.md says why): pass rate per arm with
its Wilson 95% whiskers, cost (or tokens) per run against pass rate with the Pareto front, and
each arm's terminations as stacked bars. Every arm is a hoverable point (its numbers as a
tooltip); clicking one emits ``armClicked(row)``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QHBoxLayout, QWidget

from inspector.sweeps.model import ArmStats, SweepReport

pg.setConfigOptions(antialias=True, background="w", foreground="k")

BAR = QColor(70, 130, 180)
FRONT = QColor(200, 80, 40)
# Fixed colours per termination kind, in the order they stack (others get the grey).
TERMINATION_COLOURS = {
    "stop": QColor(76, 153, 76),
    "fallback": QColor(230, 170, 50),
    "validator_exhausted": QColor(200, 80, 60),
    "step_cap": QColor(160, 100, 60),
    "provider_error": QColor(120, 60, 140),
}
OTHER = QColor(150, 150, 150)


def short_name(name: str) -> str:
    """An arm's axis label: the values only (``feedback_history=latest`` → ``latest``)."""
    return ", ".join(part.split("=", 1)[-1] for part in name.split(", "))


def arm_tip(arm: ArmStats) -> str:
    rate = "-" if arm.pass_rate is None else f"{arm.pass_rate * 100:.0f}%"
    cost = "unknown" if arm.cost.per_run is None else f"${arm.cost.per_run:.5f}"
    ends = ", ".join(f"{k} {v}" for k, v in sorted(arm.terminations.items()))
    return (
        f"{arm.name}\npass rate {rate} ({arm.passed}/{arm.runs}), 95% "
        f"{arm.pass_interval.low * 100:.0f}–{arm.pass_interval.high * 100:.0f}%\n"
        f"cost/run {cost}\n{ends}"
    )


def _plot(title: str, left: str) -> pg.PlotWidget:
    plot = pg.PlotWidget()
    plot.setTitle(title, size="10pt")
    plot.setLabel("left", left)
    plot.setMenuEnabled(False)
    plot.setMouseEnabled(x=False, y=False)
    plot.hideButtons()
    plot.setMinimumSize(150, 180)
    return plot


class SweepCharts(QWidget):
    armClicked = Signal(int)  # the arm's row in the report

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.pass_plot = _plot("Pass rate per arm (95% interval)", "pass rate %")
        self.cost_plot = _plot("Cost per run vs pass rate", "pass rate %")
        self.ends_plot = _plot("Why the runs ended", "runs")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for plot in (self.pass_plot, self.cost_plot, self.ends_plot):
            layout.addWidget(plot, 1)
        self._tips: list[str] = []
        # What each chart shows, for the tests and the bench (no need to dig in pyqtgraph).
        self.pass_data: list[tuple[float, float, float]] = []  # rate, low, high (percent)
        self.cost_data: list[tuple[float | None, float]] = []  # x, pass rate %
        self.front: list[int] = []  # rows on the Pareto front, by x
        self.ends_data: dict[str, list[int]] = {}

    def _points(self, plot: pg.PlotWidget, xs: list[float], ys: list[float]) -> None:
        points = pg.ScatterPlotItem(
            x=xs,
            y=ys,
            data=list(range(len(xs))),
            size=9,
            brush=pg.mkBrush(BAR),
            hoverable=True,
            hoverSize=13,
            tip=self._tip,
        )
        points.sigClicked.connect(self._clicked)
        plot.addItem(points)

    def _tip(self, x: float, y: float, data: Any) -> str:
        return self._tips[int(data)] if 0 <= int(data) < len(self._tips) else ""

    def _clicked(self, _item: Any, points: Any, _event: Any) -> None:
        if len(points):
            self.armClicked.emit(int(points[0].data()))

    def set_report(self, report: SweepReport | None) -> None:
        arms = [] if report is None else report.arms
        self._tips = [arm_tip(a) for a in arms]
        xs = [float(i) for i in range(len(arms))]
        ticks = [[(float(i), short_name(a.name)) for i, a in enumerate(arms)]]
        self._pass_chart(arms, xs, ticks)
        self._cost_chart(arms, report)
        self._ends_chart(arms, xs, ticks)

    def _pass_chart(self, arms: list[ArmStats], xs: list[float], ticks: Any) -> None:
        plot = self.pass_plot
        plot.clear()
        self.pass_data = [
            ((a.pass_rate or 0.0) * 100, a.pass_interval.low * 100, a.pass_interval.high * 100)
            for a in arms
        ]
        plot.getAxis("bottom").setTicks(ticks)
        plot.setYRange(0, 100)
        if not arms:
            return
        rates = [d[0] for d in self.pass_data]
        plot.addItem(pg.BarGraphItem(x=xs, height=rates, width=0.6, brush=pg.mkBrush(BAR)))
        plot.addItem(
            pg.ErrorBarItem(
                x=np.array(xs),
                y=np.array(rates),
                beam=0.2,
                top=np.array([d[2] - d[0] for d in self.pass_data]),
                bottom=np.array([d[0] - d[1] for d in self.pass_data]),
                pen=pg.mkPen("k", width=1.5),
            )
        )
        self._points(plot, xs, rates)
        plot.setXRange(-0.6, len(arms) - 0.4)

    def _cost_chart(self, arms: list[ArmStats], report: SweepReport | None) -> None:
        plot = self.cost_plot
        plot.clear()
        by_tokens = report is not None and report.pareto_axis == "tokens"
        plot.setLabel("bottom", "tokens per run" if by_tokens else "$ per run")
        plot.setYRange(0, 100)

        def x_of(arm: ArmStats) -> float | None:
            if by_tokens:
                tokens = (arm.input_tokens.mean or 0.0) + (arm.output_tokens.mean or 0.0)
                return tokens if arm.runs else None
            return arm.cost.per_run

        self.cost_data = [(x_of(a), (a.pass_rate or 0.0) * 100) for a in arms]
        shown = [(i, x, y) for i, (x, y) in enumerate(self.cost_data) if x is not None]
        self.front = sorted(
            (i for i, a in enumerate(arms) if a.pareto), key=lambda i: self.cost_data[i][0] or 0.0
        )
        front = [(self.cost_data[i][0] or 0.0, self.cost_data[i][1]) for i in self.front]
        if len(front) > 1:
            plot.plot([p[0] for p in front], [p[1] for p in front], pen=pg.mkPen(FRONT, width=2))
        if shown:
            points = pg.ScatterPlotItem(
                x=[s[1] for s in shown],
                y=[s[2] for s in shown],
                data=[s[0] for s in shown],
                size=10,
                brush=[pg.mkBrush(FRONT if arms[s[0]].pareto else BAR) for s in shown],
                hoverable=True,
                hoverSize=14,
                tip=self._tip,
            )
            points.sigClicked.connect(self._clicked)
            plot.addItem(points)

    def _ends_chart(self, arms: list[ArmStats], xs: list[float], ticks: Any) -> None:
        plot = self.ends_plot
        plot.clear()
        plot.getAxis("bottom").setTicks(ticks)
        order = list(TERMINATION_COLOURS)
        found = {k for a in arms for k in a.terminations}
        kinds = [k for k in order if k in found] + sorted(found - set(order))
        self.ends_data = {k: [a.terminations.get(k, 0) for a in arms] for k in kinds}
        key = " ".join(  # the legend in the title: it never covers a bar
            f"<span style='color:{TERMINATION_COLOURS.get(k, OTHER).name()}'>&#9632;</span> {k}"
            for k in kinds
        )
        plot.setTitle(f"Why the runs ended<br>{key}" if kinds else "Why the runs ended", size="9pt")
        if not arms:
            return
        base = [0.0] * len(arms)
        for kind in kinds:
            heights = [float(v) for v in self.ends_data[kind]]
            colour = TERMINATION_COLOURS.get(kind, OTHER)
            plot.addItem(
                pg.BarGraphItem(
                    x=xs, y0=base, height=heights, width=0.6, brush=pg.mkBrush(colour), name=kind
                )
            )
            base = [b + h for b, h in zip(base, heights, strict=True)]
        self._points(plot, xs, base)
        plot.setXRange(-0.6, len(arms) - 0.4)
