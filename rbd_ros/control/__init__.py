"""Control laws, gains, references and the control loop (ROS-free).  Importing the package
registers the force laws (``force_laws``) in ``laws.LAW_CLASSES``."""
from rbd_ros.control import force_laws as _force_laws  # noqa: F401 - registers the laws
