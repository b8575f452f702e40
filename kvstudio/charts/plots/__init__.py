"""Chart building blocks every view shares: legends, token axes, end labels, fixed columns,
the empty look and the sizing rules (the window's lab panels, its live plots and the notebook).
"""
